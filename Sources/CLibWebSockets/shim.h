// Debian's libwebsockets (4.1 on bookworm) and libuv, for HearthTransport only.
// Only what Swift cannot call directly lives here: function-like macros, as prefixed inline functions.
#ifndef CHEARTH_LWS_SHIM_H
#define CHEARTH_LWS_SHIM_H

#include <libwebsockets.h>
#include <uv.h>

/// LWS_PRE (lws-write.h, built from _LWS_PAD): bytes lws needs before every buffer given to lws_write.
static inline size_t CHearthLWS_pre(void) { return LWS_PRE; }

/// LWS_ILLEGAL_HTTP_CONTENT_LEN (lws-http.h): "no content-length header" for lws_add_http_common_headers.
static inline lws_filepos_t CHearthLWS_noContentLength(void) { return LWS_ILLEGAL_HTTP_CONTENT_LEN; }

/// lws_get_context + lws_context_user: the owner pointer given at context creation.
static inline void *CHearthLWS_contextUser(struct lws *wsi) { return lws_context_user(lws_get_context(wsi)); }

#endif
