// Debian's libpq (package libpq-dev; headers in /usr/include/postgresql, found through pkg-config).
// Imported only by HearthPostgres.
#include <libpq-fe.h>

// PG_DIAG_SQLSTATE and PG_DIAG_MESSAGE_PRIMARY are character-literal macros ('C', 'M'), which do not
// import into Swift. They name the fields PQresultErrorField reads.
static inline int CLibPQ_diagnosticSQLState(void) { return PG_DIAG_SQLSTATE; }
static inline int CLibPQ_diagnosticMessagePrimary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
