// The official Firebase JS SDK's auth module (node build) against Hearth's Auth endpoints, then the
// database with the signed-in user's ID token deciding the rules.
// Usage: node auth.cjs HOST PORT NAMESPACE PROJECT   (NODE_PATH = the SDK's node_modules)
// Without node_modules (FIREBASE_JS_SDK_DIR), js_sdk_support.py runs this same file in headless Chromium:
// runner.html, on Google's compat bundles of the SDK and modular_on_compat.js.
// Prints one JSON line {"ok": true, ...} or {"ok": false, "error": ...}; exits 0 or 1.
const { initializeApp, deleteApp } = require("firebase/app");
const auth = require("firebase/auth");
const db = require("firebase/database");

const [host, port, namespace, projectId] = process.argv.slice(2);
const base = `http://${host}:${port}`;

function check(condition, what) { if (!condition) throw new Error(what); }

async function oobCode(email, requestType) {
  const response = await fetch(`${base}/emulator/v1/projects/${projectId}/oobCodes`);
  const { oobCodes } = await response.json();
  const matching = oobCodes.filter((c) => c.email === email && c.requestType === requestType);
  check(matching.length > 0, `no ${requestType} code for ${email} in the outbox`);
  return matching[matching.length - 1].oobCode;
}

async function expectCode(promise, code, what) {
  try { await promise; } catch (error) { check(error.code === code || String(error.message).toLowerCase().includes(code.toLowerCase().replace("_", " ")), `${what}: ${error.code} ${error.message} instead of ${code}`); return; }
  throw new Error(`${what} succeeded; expected ${code}`);
}

(async () => {
  const app = initializeApp({ apiKey: "fake-api-key", projectId, databaseURL: `${base}?ns=${namespace}` });
  const a = auth.getAuth(app);
  auth.connectAuthEmulator(a, base, { disableWarnings: true });
  const database = db.getDatabase(app);
  db.connectDatabaseEmulator(database, host, Number(port));
  const email = `ada${Date.now()}@example.com`;

  // Sign up, then the rules see auth.uid: own profile writable, another's not.
  const signedUp = await auth.createUserWithEmailAndPassword(a, email, "first-password");
  const uid = signedUp.user.uid;
  await auth.updateProfile(signedUp.user, { displayName: "Ada" });
  await db.set(db.ref(database, `users/${uid}`), { name: "Ada" });
  await expectCode(db.set(db.ref(database, "users/someone-else"), { name: "X" }), "PERMISSION_DENIED", "writing another's profile");
  check((await db.get(db.ref(database, `users/${uid}/name`))).val() === "Ada", "reading back the profile");

  // Wrong password and unknown accounts: the SDK's own error codes.
  await auth.signOut(a);
  await expectCode(auth.signInWithEmailAndPassword(a, email, "wrong-password"), "auth/invalid-credential", "wrong password");
  await expectCode(auth.createUserWithEmailAndPassword(a, email, "another-pass"), "auth/email-already-in-use", "sign-up twice");
  await expectCode(auth.createUserWithEmailAndPassword(a, `weak${Date.now()}@example.com`, "123"), "auth/weak-password", "weak password");

  // Sign in again; a forced refresh gives a new ID token; the profile change is in it.
  const signedIn = await auth.signInWithEmailAndPassword(a, email, "first-password");
  const first = await signedIn.user.getIdToken();
  const refreshed = await signedIn.user.getIdToken(true);
  check(typeof refreshed === "string" && refreshed.split(".").length === 3 && first.length > 0, "a refreshed ID token");
  check(signedIn.user.displayName === "Ada", "displayName after sign-in");

  // Email verification through the outbox.
  check(signedIn.user.emailVerified === false, "new accounts are unverified");
  await auth.sendEmailVerification(signedIn.user);
  await auth.applyActionCode(a, await oobCode(email, "VERIFY_EMAIL"));
  await signedIn.user.reload();
  check(a.currentUser.emailVerified === true, "emailVerified after applying the code");

  // Password reset: the old password stops working, the new one works.
  await auth.sendPasswordResetEmail(a, email);
  const resetCode = await oobCode(email, "PASSWORD_RESET");
  check((await auth.verifyPasswordResetCode(a, resetCode)) === email, "verifyPasswordResetCode names the account");
  await auth.confirmPasswordReset(a, resetCode, "second-password");
  await auth.signOut(a);
  await expectCode(auth.signInWithEmailAndPassword(a, email, "first-password"), "auth/invalid-credential", "old password after reset");
  await auth.signInWithEmailAndPassword(a, email, "second-password");

  // Signed out, the database sees auth == null.
  await auth.signOut(a);
  await expectCode(db.get(db.ref(database, `users/${uid}`)), "PERMISSION_DENIED", "reading a profile signed out");

  // Anonymous sign-in.
  const anonymous = await auth.signInAnonymously(a);
  check(anonymous.user.isAnonymous, "anonymous user");
  await deleteApp(app);
  console.log(JSON.stringify({ ok: true, uid }));
  process.exit(0);
})().catch((error) => {
  console.log(JSON.stringify({ ok: false, error: `${error.code || ""} ${error.stack || error}` }));
  process.exit(1);
});
