// Debian's libsodium (package libsodium-dev): argon2id password hashing and the system CSPRNG.
// Imported only by HearthCrypto.
#include <sodium.h>
