import HearthProtocol
import Foundation

/// The pages an emailed link opens in a browser (`Accept: text/html`): verify the address, or choose a new
/// password. Opening a page never uses the code (mail scanners fetch links); only the form's POST does.
/// Scripts and other JSON clients keep the emulator's JSON answers.
extension AuthService {
    func actionPage(_ request: HTTPRequest) -> HTTPResponse {
        guard let code = request.query("oobCode"), let mode = request.query("mode") else {
            return page(400, "Invalid link", "<p>This link is incomplete. Open the link from the email again.</p>")
        }
        if mode == "signIn" {
            return signInRedirect(request) ?? page(400, "Invalid link", "<p>This sign-in link has expired, has been used, or has no authorized way back to the app.</p>")
        }
        let oob: OobCode
        do { oob = try liveCode(code) } catch {
            return page(400, "Link expired", "<p>This link has expired or has already been used. Ask the app for a new one.</p>")
        }
        let hidden = hiddenFields(request, code: code, mode: mode)
        switch (mode, oob.requestType) {
        case ("verifyEmail", "VERIFY_EMAIL"):
            return page(200, "Verify your email", """
                <p>Confirm that <strong>\(html(oob.email))</strong> is your email address.</p>
                <form method="post" action="/emulator/action">\(hidden)<button type="submit">Verify</button></form>
                """)
        case ("verifyAndChangeEmail", "VERIFY_AND_CHANGE_EMAIL"):
            return page(200, "Change your email", """
                <p>Make <strong>\(html(oob.newEmail ?? ""))</strong> the email address of your account.</p>
                <form method="post" action="/emulator/action">\(hidden)<button type="submit">Change</button></form>
                """)
        case ("resetPassword", "PASSWORD_RESET"):
            return page(200, "Choose a new password", """
                <p>For <strong>\(html(oob.email))</strong></p>
                <form method="post" action="/emulator/action">\(hidden)
                <label>New password <input type="password" name="newPassword" minlength="6" required autocomplete="new-password"></label>
                <button type="submit">Save</button></form>
                """)
        default:
            return page(400, "Invalid link", "<p>This link cannot be used here.</p>")
        }
    }

    /// The form's POST (`application/x-www-form-urlencoded`): does the action and answers a page.
    func actionForm(_ request: HTTPRequest) throws -> HTTPResponse {
        let form = try RequestBody(bytes: request.body, form: true)
        guard let code = form.string("oobCode"), let mode = form.string("mode") else {
            return page(400, "Invalid request", "<p>The form is incomplete.</p>")
        }
        let continueUrl = form.string("continueUrl").flatMap { isAuthorizedContinueURL($0) ? $0 : nil }
        let next = continueUrl.map { "<p><a href=\"\(html($0))\">Continue</a></p>" } ?? ""
        do {
            switch mode {
            case "verifyAndChangeEmail":
                let result = try applyOobCode(code)
                return page(200, "Email changed", "<p>Your account's email address is now \(html(result["newEmail"] as? String ?? "changed")).</p>\(next)")
            case "verifyEmail":
                let result = try applyOobCode(code)
                return page(200, "Email verified", "<p>\(html(result["email"] as? String ?? "Your address")) is verified. You can close this page.</p>\(next)")
            case "resetPassword":
                let result = try resetPassword(AuthCall(
                    body: RequestBody(fields: ["oobCode": code, "newPassword": form.string("newPassword") ?? ""]), isAdmin: false,
                    projectPath: false, request: request, apiKey: nil))
                return page(200, "Password changed", "<p>The password of \(html(result["email"] as? String ?? "your account")) is changed. Sign in with it now.</p>\(next)")
            default:
                return page(400, "Invalid request", "<p>Unknown action.</p>")
            }
        } catch let error as AuthError {
            let text = error.code == "WEAK_PASSWORD"
                ? "The password must have at least 6 characters. Go back and choose another."
                : "This link has expired or has already been used. Ask the app for a new one."
            return page(400, "Not done", "<p>\(text)</p>")
        }
    }

    private func hiddenFields(_ request: HTTPRequest, code: String, mode: String) -> String {
        var fields = [("mode", mode), ("oobCode", code)]
        if let apiKey = request.query("apiKey") { fields.append(("apiKey", apiKey)) }
        if let continueUrl = request.query("continueUrl") { fields.append(("continueUrl", continueUrl)) }
        return fields.map { "<input type=\"hidden\" name=\"\($0.0)\" value=\"\(html($0.1))\">" }.joined()
    }

    private func page(_ status: Int, _ title: String, _ content: String) -> HTTPResponse {
        let document = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(html(title)) · \(html(configuration.projectID))</title>
            <style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}
            input{display:block;width:100%;margin:.5rem 0 1rem;padding:.5rem;font:inherit}button{padding:.5rem 1rem;font:inherit}</style>
            </head><body><h1>\(html(title))</h1>
            \(content)
            </body></html>

            """
        return HTTPResponse(
            status: status,
            headers: [
                ("content-type", "text/html; charset=utf-8"),
                ("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"),
                ("referrer-policy", "no-referrer"),
            ],
            body: Array(document.utf8))
    }

    private func html(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
