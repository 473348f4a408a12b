import Foundation
import HearthCrypto
import HearthProtocol

/// The Auth emulator's stand-in for a provider's sign-in page, as Firebase's emulator has it: with
/// `--emulator`, the JS SDK's `signInWithPopup` and `signInWithRedirect` open
/// `/emulator/auth/handler` (instead of `https://<authDomain>/__/auth/handler`) and load
/// `/emulator/auth/iframe` into the app's page (instead of `__/auth/iframe`). The handler lets the
/// developer pick or make up the provider's user; its answer is an `AuthEvent` whose `urlResponse`
/// carries an unsigned JSON `id_token`, which `signInWithIdp` accepts in emulator mode.
///
/// How the event reaches the SDK (docs/auth.md, "The provider sign-in page"):
/// - popup: the handler posts `{eventType: "sendAuthEvent", data: {authEvent, storageKey}}` to the
///   emulator's iframe in its opener (same origin as the handler), which hands it to the SDK over
///   gapi.iframes' `authEvent` message; then the popup closes.
/// - redirect: the handler keeps the event in its origin's sessionStorage under
///   `firebase:redirectEvent:<apiKey>:<appName>` and goes back to `redirectUrl`; the iframe the app loads
///   there sends it (or `auth/no-auth-event` when there is none), once.
///
/// The iframe talks to the SDK through `gapi.iframes`, loaded from apis.google.com as the SDK loads it
/// in the app's page: the two must be the same library for their messages to meet.
extension AuthService {
    static let providerWidgetPaths: Set<String> = ["/emulator/auth/handler", "/emulator/auth/iframe"]

    func providerWidget(_ path: String, _ request: HTTPRequest) throws -> HTTPResponse {
        guard configuration.emulator else {
            throw AuthError.invalid(
                "OPERATION_NOT_ALLOWED",
                "the provider sign-in page is the Auth emulator's: start hearth serve with --emulator, or sign in with the provider's own SDK and pass its token to signInWithCredential")
        }
        guard request.method == .get || request.method == .head else { throw AuthError.notFound }
        let nonce = Base64URL.encode(SecureRandom.bytes(18))
        if path == "/emulator/auth/iframe" {
            return widgetPage(Self.iframeDocument(nonce: nonce), scriptSources: "'nonce-\(nonce)' https://apis.google.com", frameAncestors: "*")
        }
        return widgetPage(handlerDocument(nonce: nonce), scriptSources: "'nonce-\(nonce)'", frameAncestors: "'none'")
    }

    private func widgetPage(_ document: String, scriptSources: String, frameAncestors: String) -> HTTPResponse {
        HTTPResponse(
            status: 200,
            headers: [
                ("content-type", "text/html; charset=utf-8"),
                ("content-security-policy",
                 "default-src 'none'; script-src \(scriptSources); style-src 'unsafe-inline'; connect-src 'self'; "
                    + "frame-src https://apis.google.com https://*.google.com; img-src 'self' data: https:; frame-ancestors \(frameAncestors)"),
                ("referrer-policy", "no-referrer"),
            ],
            body: Array(document.utf8))
    }

    /// The project, for the page's list of the provider's accounts (`accounts:query` as `owner`, which
    /// the emulator allows). JSON inside a script element: `<` escaped so no text can close it.
    private func handlerDocument(nonce: String) -> String {
        let settings = JSONText.encode(["projectId": configuration.projectID]).replacingOccurrences(of: "<", with: "\\u003c")
        return Self.handlerTemplate
            .replacingOccurrences(of: "{{NONCE}}", with: nonce)
            .replacingOccurrences(of: "{{SETTINGS}}", with: settings)
    }

    private static func iframeDocument(nonce: String) -> String {
        iframeTemplate.replacingOccurrences(of: "{{NONCE}}", with: nonce)
    }

    private static let handlerTemplate = #"""
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Sign in · Hearth Auth emulator</title>
        <style>
        body{font:15px system-ui,sans-serif;max-width:30rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
        h1{font-size:1.3rem;margin-bottom:.25rem}.note{color:#59636e;margin-top:0}
        label{display:block;margin:.6rem 0 .2rem}input[type=text],input[type=email],input[type=url]{width:100%;box-sizing:border-box;padding:.45rem;font:inherit}
        button{padding:.5rem 1rem;font:inherit;margin:.8rem .5rem 0 0;cursor:pointer}
        #accounts button{display:block;width:100%;text-align:left;margin:.3rem 0;background:#f6f8fa;border:1px solid #d1d9e0;border-radius:6px}
        .error{color:#d1242f}
        </style></head><body>
        <h1 id="title">Sign in</h1>
        <p class="note">Hearth's Auth emulator stands in for the provider: nothing is sent to it. Pick an account or describe a new one.</p>
        <div id="accounts"></div>
        <form id="new-account">
        <h2 style="font-size:1.05rem">New account</h2>
        <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="off">
        <label for="displayName">Display name</label><input id="displayName" name="displayName" type="text" autocomplete="off">
        <label for="screenName">Screen name</label><input id="screenName" name="screenName" type="text" autocomplete="off">
        <label for="photoUrl">Photo URL</label><input id="photoUrl" name="photoUrl" type="url" autocomplete="off">
        <label><input id="emailVerified" type="checkbox" checked> Email verified</label>
        <button type="button" id="generate">Auto-generate user information</button>
        <button type="submit" id="sign-in">Sign in</button>
        <button type="button" id="cancel">Cancel</button>
        </form>
        <p id="status" role="status"></p>
        <script type="application/json" id="settings">{{SETTINGS}}</script>
        <script nonce="{{NONCE}}">
        "use strict";
        (() => {
          const settings = JSON.parse(document.getElementById("settings").textContent);
          const query = new URLSearchParams(location.search);
          const providerId = query.get("providerId") || "";
          const authType = query.get("authType") || "";
          const apiKey = query.get("apiKey") || "", appName = query.get("appName") || "";
          const status = document.getElementById("status");
          const fail = (text) => { status.textContent = text; status.className = "error"; };
          const providerNames = {"google.com": "Google", "apple.com": "Apple", "github.com": "GitHub", "facebook.com": "Facebook",
            "twitter.com": "Twitter", "microsoft.com": "Microsoft", "yahoo.com": "Yahoo"};
          const providerName = providerNames[providerId] || providerId;
          document.getElementById("title").textContent = "Sign in with " + providerName;
          document.title = "Sign in with " + providerName + " · Hearth Auth emulator";
          document.getElementById("sign-in").textContent = "Sign in with " + providerName;
          const viaPopup = /ViaPopup$/.test(authType), viaRedirect = /ViaRedirect$/.test(authType);
          if (!providerId || !apiKey || !(viaPopup || viaRedirect)) {
            document.getElementById("new-account").hidden = true;
            fail("This page is opened by the Firebase JS SDK's signInWithPopup or signInWithRedirect; it needs providerId, apiKey and authType.");
            return;
          }
          const randomId = () => Array.from(crypto.getRandomValues(new Uint8Array(10)), (b) => b.toString(16).padStart(2, "0")).join("");
          let subject = randomId();

          // The SDK's AuthEvent: signInWithIdp is then called with urlResponse as requestUri.
          function authEvent(claims) {
            const response = new URL("/emulator/auth/handler", location.origin);
            response.searchParams.set("providerId", providerId);
            response.searchParams.set("id_token", JSON.stringify(claims));
            return {type: authType, eventId: query.get("eventId"), urlResponse: response.href, sessionId: randomId(),
              postBody: "", tenantId: query.get("tid"), error: null};
          }
          function finish(claims) {
            const event = authEvent(claims);
            const storageKey = apiKey + ":" + appName;
            if (viaRedirect) {
              sessionStorage.setItem("firebase:redirectEvent:" + storageKey, JSON.stringify(event));
              const back = query.get("redirectUrl");
              if (!back) { fail("The SDK gave no redirectUrl to go back to."); return; }
              location.replace(back);
              return;
            }
            // The popup's opener holds the emulator's iframe (same origin as this page): hand it the event.
            let delivered = false;
            try {
              const frames = window.opener ? window.opener.frames : [];
              for (let index = 0; index < frames.length; index++) {
                try {
                  const frame = frames[index];
                  if (frame.location.origin === location.origin && frame.location.pathname === "/emulator/auth/iframe") {
                    frame.postMessage({eventType: "sendAuthEvent", data: {authEvent: event, storageKey}}, location.origin);
                    delivered = true;
                  }
                } catch (notOurs) { /* another origin's frame */ }
              }
            } catch (noOpener) { /* opened without an opener */ }
            if (!delivered) { fail("The app's window is gone or has no Auth emulator iframe: close this window and try again from the app."); return; }
            status.textContent = "Signed in: you can close this window.";
            window.close();
          }
          function claimsFromForm() {
            const value = (id) => document.getElementById(id).value.trim();
            const claims = {sub: subject, email_verified: document.getElementById("emailVerified").checked};
            if (value("email")) claims.email = value("email");
            if (value("displayName")) claims.name = value("displayName");
            if (value("screenName")) claims.screen_name = value("screenName");
            if (value("photoUrl")) claims.picture = value("photoUrl");
            if (!claims.email) claims.email_verified = false;
            return claims;
          }
          document.getElementById("new-account").addEventListener("submit", (event) => { event.preventDefault(); finish(claimsFromForm()); });
          document.getElementById("cancel").addEventListener("click", () => {
            if (viaPopup) { window.close(); return; }
            const back = query.get("redirectUrl");
            if (back) location.replace(back);
          });
          document.getElementById("generate").addEventListener("click", () => {
            const adjectives = ["amber", "brisk", "calm", "daring", "eager", "fuzzy", "gentle", "happy"];
            const animals = ["otter", "falcon", "panda", "lynx", "heron", "koala", "badger", "tiger"];
            const pick = (list) => list[crypto.getRandomValues(new Uint8Array(1))[0] % list.length];
            const first = pick(adjectives), second = pick(animals), number = 100 + crypto.getRandomValues(new Uint8Array(1))[0];
            subject = randomId();
            document.getElementById("email").value = first + "." + second + "." + number + "@example.com";
            document.getElementById("displayName").value = first[0].toUpperCase() + first.slice(1) + " " + second[0].toUpperCase() + second.slice(1);
            document.getElementById("screenName").value = first + "_" + second + number;
            document.getElementById("emailVerified").checked = true;
          });

          // The provider's accounts already in the emulator: sign in as one again with a click.
          const list = document.getElementById("accounts");
          fetch("/identitytoolkit.googleapis.com/v1/projects/" + encodeURIComponent(settings.projectId) + "/accounts:query",
                {method: "POST", headers: {"content-type": "application/json", authorization: "Bearer owner"},
                 body: JSON.stringify({returnUserInfo: true, limit: 500})})
            .then((answer) => answer.ok ? answer.json() : {userInfo: []})
            .then((answer) => {
              const accounts = [];
              for (const user of answer.userInfo || []) {
                for (const linked of user.providerUserInfo || []) {
                  if (linked.providerId === providerId) accounts.push(linked);
                }
              }
              if (accounts.length === 0) return;
              const heading = document.createElement("h2");
              heading.style.fontSize = "1.05rem";
              heading.textContent = providerName + " accounts in the emulator";
              list.append(heading);
              for (const account of accounts.slice(0, 50)) {
                const button = document.createElement("button");
                button.type = "button";
                button.className = "account";
                button.textContent = (account.displayName ? account.displayName + " · " : "") + (account.email || account.rawId);
                button.addEventListener("click", () => {
                  const claims = {sub: account.rawId, email_verified: Boolean(account.email)};
                  if (account.email) claims.email = account.email;
                  if (account.displayName) claims.name = account.displayName;
                  if (account.screenName) claims.screen_name = account.screenName;
                  if (account.photoUrl) claims.picture = account.photoUrl;
                  finish(claims);
                });
                list.append(button);
              }
            })
            .catch(() => { /* the list is a convenience: the form still works */ });
        })();
        </script>
        </body></html>

        """#

    private static let iframeTemplate = #"""
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Hearth Auth emulator</title></head><body>
        <script nonce="{{NONCE}}">
        "use strict";
        (() => {
          const query = new URLSearchParams(location.search);
          const storageKey = (query.get("apiKey") || "") + ":" + (query.get("appName") || "");
          const redirectKey = "firebase:redirectEvent:" + storageKey;
          const noEvent = {type: "unknown", eventId: null, urlResponse: null, sessionId: null, postBody: null, tenantId: null,
            error: {code: "auth/no-auth-event"}};

          function start() {
            const filter = gapi.iframes.CROSS_ORIGIN_IFRAMES_FILTER;
            const parent = gapi.iframes.getContext().getParentIframe();
            parent.register("webStorageSupport", () => ({status: "ACK", webStorageSupport: true}), filter);
            // Sent until the SDK answers: its handler may not be registered yet when this page starts.
            function send(authEvent, attempt) {
              parent.send("authEvent", {type: "authEvent", authEvent}, (replies) => {
                const reply = Array.isArray(replies) ? replies[0] : replies;
                if (!reply && attempt < 50) setTimeout(() => send(authEvent, attempt + 1), 100);
              }, filter);
            }
            // A redirect's event, kept by the handler in this origin's sessionStorage: delivered once.
            let pending = null;
            try {
              pending = sessionStorage.getItem(redirectKey);
              sessionStorage.removeItem(redirectKey);
            } catch (noStorage) { /* storage blocked: no redirect result */ }
            let event = noEvent;
            try { if (pending) event = JSON.parse(pending); } catch (unreadable) { /* a damaged entry: no result */ }
            send(event, 0);
            // A popup's event, posted here by the handler in the popup.
            window.addEventListener("message", (message) => {
              if (message.origin !== location.origin || !message.data || message.data.eventType !== "sendAuthEvent") return;
              const data = message.data.data || {};
              if (data.storageKey === storageKey && data.authEvent) send(data.authEvent, 0);
            });
          }
          const script = document.createElement("script");
          script.src = "https://apis.google.com/js/api.js";
          script.onload = () => gapi.load("gapi.iframes", {callback: start, timeout: 30000, ontimeout: () => {}});
          document.head.append(script);
        })();
        </script>
        </body></html>

        """#
}
