// Debian's libcurl (package libcurl4-openssl-dev): SMTP delivery of auth emails, HTTPS requests to
// identity providers. Imported only by HearthOutbound.
#include <curl/curl.h>

// curl_easy_setopt is variadic, which Swift cannot call: one typed wrapper per argument kind.
static inline CURLcode CCurl_setopt_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode CCurl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode CCurl_setopt_pointer(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode CCurl_setopt_slist(CURL *curl, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(curl, option, value);
}
typedef size_t (*CCurl_read_callback)(char *buffer, size_t size, size_t count, void *context);
static inline CURLcode CCurl_setopt_read_function(CURL *curl, CCurl_read_callback callback) {
    return curl_easy_setopt(curl, CURLOPT_READFUNCTION, callback);
}
typedef size_t (*CCurl_write_callback)(char *buffer, size_t size, size_t count, void *context);
static inline CURLcode CCurl_setopt_write_function(CURL *curl, CCurl_write_callback callback) {
    return curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, callback);
}
static inline CURLcode CCurl_setopt_header_function(CURL *curl, CCurl_write_callback callback) {
    return curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, callback);
}
static inline CURLcode CCurl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}
// Called once connected, before the request is sent: how the server refuses addresses a URL's name
// resolved to that its policy forbids (private, loopback) without resolving twice.
typedef int (*CCurl_prereq_callback)(void *context, char *primary_ip, char *local_ip, int primary_port, int local_port);
static inline CURLcode CCurl_setopt_prereq_function(CURL *curl, CCurl_prereq_callback callback) {
    return curl_easy_setopt(curl, CURLOPT_PREREQFUNCTION, callback);
}
