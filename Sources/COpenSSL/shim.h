// Debian's OpenSSL 3 libcrypto (package libssl-dev): RSA keys and RS256, scrypt, AES-256-CTR.
// Imported only by HearthCrypto.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>

// EVP_RSA_gen is a macro over the variadic EVP_PKEY_Q_keygen, neither of which imports into Swift.
static inline EVP_PKEY *COpenSSL_rsa_generate(unsigned int bits) { return EVP_RSA_gen(bits); }

// BIO_get_mem_data is a macro over BIO_ctrl.
static inline long COpenSSL_bio_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
