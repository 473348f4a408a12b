// Debian's libpq (package libpq-dev; headers in /usr/include/postgresql, found through pkg-config).
// Imported only by HearthPostgres.
#include <libpq-fe.h>

// PG_DIAG_SQLSTATE, PG_DIAG_MESSAGE_PRIMARY and PG_DIAG_CONSTRAINT_NAME are character-literal macros
// ('C', 'M', 'n'), which do not import into Swift. They name the fields PQresultErrorField reads.
static inline int CLibPQ_diagnosticSQLState(void) { return PG_DIAG_SQLSTATE; }
static inline int CLibPQ_diagnosticMessagePrimary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int CLibPQ_diagnosticConstraintName(void) { return PG_DIAG_CONSTRAINT_NAME; }
