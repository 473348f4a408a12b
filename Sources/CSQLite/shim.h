// Debian's libsqlite3 (package libsqlite3-dev). Imported only by HearthSQLite.
#include <sqlite3.h>

// SQLITE_TRANSIENT: a function-like cast macro that does not import into Swift. It tells
// sqlite3_bind_* to copy the bytes before returning.
static inline sqlite3_destructor_type CSQLite_transient(void) { return SQLITE_TRANSIENT; }
