// The official Firebase JS SDK's auth module against blocking auth hooks (test_blocking_hooks.py starts the
// hook): a refused sign-up is the SDK's auth/internal-error carrying the hook's message; an allowed one
// gets the claims the hooks added in its ID token.
// Usage: node blocking.cjs HOST PORT PROJECT   (NODE_PATH = the SDK's node_modules; or js_sdk_support.py's Chromium)
// Prints one JSON line {"ok": true, ...} or {"ok": false, "error": ...}; exits 0 or 1.
const { initializeApp, deleteApp } = require("firebase/app");
const auth = require("firebase/auth");

const [host, port, projectId] = process.argv.slice(2);

function check(condition, what) { if (!condition) throw new Error(what); }

(async () => {
  const app = initializeApp({ apiKey: "fake-api-key", projectId }, `blocking-${Date.now()}`);
  const a = auth.getAuth(app);
  auth.connectAuthEmulator(a, `http://${host}:${port}`, { disableWarnings: true });

  let refusal = null;
  try {
    await auth.createUserWithEmailAndPassword(a, `mallory${Date.now()}@evil.test`, "secret-pass");
  } catch (error) {
    refusal = error;
  }
  check(refusal !== null, "a sign-up the hook refuses succeeded");
  check(refusal.code === "auth/internal-error", `the refusal's code is ${refusal.code}, not auth/internal-error`);
  check(String(refusal.message).includes("may not sign up here"), `the refusal's message lacks the hook's: ${refusal.message}`);
  check(a.currentUser === null, "a refused sign-up signed someone in");

  const created = await auth.createUserWithEmailAndPassword(a, `ada${Date.now()}@example.com`, "secret-pass");
  const { claims } = await created.user.getIdTokenResult();
  check(claims.role === "member", `the beforeCreate claim is missing: ${JSON.stringify(claims)}`);
  check(claims.signedInVia === "hook", `the beforeSignIn session claim is missing: ${JSON.stringify(claims)}`);
  await created.user.reload();
  check(created.user.displayName === "New member", `displayName is ${created.user.displayName}`);
  await deleteApp(app);
  console.log(JSON.stringify({ ok: true, refusal: refusal.message }));
  process.exit(0);
})().catch((error) => {
  console.log(JSON.stringify({ ok: false, error: String(error && error.stack || error) }));
  process.exit(1);
});
