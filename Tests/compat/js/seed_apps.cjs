// The seed tutorials' apps (../shared/seeds), as the official JS SDK runs them against Hearth with the
// rules of Examples/rules/seed-apps.bolt deployed and the seed functions (Examples/SeedFunctions) beside the
// server: each flow is what the tutorial's app does.
// Usage: node seed_apps.cjs HOST PORT NAMESPACE PROJECT   (NODE_PATH = the SDK's node_modules)
// Without node_modules (FIREBASE_JS_SDK_DIR), js_sdk_support.py runs this same file in headless Chromium:
// runner.html, on Google's compat bundles of the SDK and modular_on_compat.js.
// Prints one JSON line {"ok": true, ...} or {"ok": false, "error": ...}; exits 0 or 1.
const { initializeApp, deleteApp } = require("firebase/app");
const auth = require("firebase/auth");
const db = require("firebase/database");

const [host, port, namespace, projectId] = process.argv.slice(2);
const base = `http://${host}:${port}`;
const apps = [];

function check(condition, what) { if (!condition) throw new Error(what); }

/// A signed-up user with its own app instance (the tutorial's app on one phone).
async function user(name) {
  const app = initializeApp({ apiKey: "fake-api-key", projectId, databaseURL: `${base}?ns=${namespace}` }, name);
  apps.push(app);
  const a = auth.getAuth(app);
  auth.connectAuthEmulator(a, base, { disableWarnings: true });
  const database = db.getDatabase(app);
  db.connectDatabaseEmulator(database, host, Number(port));
  const credential = await auth.createUserWithEmailAndPassword(a, `${name}${Date.now()}@example.com`, "joke-password");
  return { app, auth: a, db: database, uid: credential.user.uid, user: credential.user };
}

/// Whether the value at `ref` comes to satisfy `predicate` within 10 s, as a listening app would see it.
function until(ref, predicate) {
  return new Promise((resolve) => {
    let done = false;
    const stop = db.onValue(ref, (snapshot) => {
      if (done || !predicate(snapshot.val())) return;
      done = true;
      setTimeout(() => stop(), 0);
      resolve(true);
    });
    setTimeout(() => { if (!done) { done = true; stop(); resolve(false); } }, 10000);
  });
}

async function denied(promise) {
  try { await promise; } catch (error) { return true; }
  return false;
}

(async () => {
  const ada = await user("ada"), bob = await user("bob");

  // Jokes (seeds 000/001): post with a chronological push key, a live feed newest first.
  const jokes = db.ref(ada.db, "jokes");
  const feed = [];
  const feedQuery = db.query(db.ref(bob.db, "jokes"), db.orderByKey(), db.limitToLast(10));
  const stopFeed = db.onValue(feedQuery, (snapshot) => {
    feed.length = 0;
    snapshot.forEach((child) => { feed.unshift(child.val().text); });
  });
  for (const text of ["first joke", "second joke", "third joke"]) {
    await db.push(jokes, { text, author: ada.uid, votes: 0 });
  }
  check(await denied(db.push(jokes, { text: "as someone else", author: bob.uid, votes: 0 })), "posting as another user");
  for (let i = 0; i < 50 && feed.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
  check(JSON.stringify(feed) === JSON.stringify(["third joke", "second joke", "first joke"]), `feed newest first: ${feed}`);
  stopFeed();

  // A thumb vote: the voter's own mark only; the seed functions count it into the joke's total (a
  // Cloud Function's job on Firebase), and the rules keep clients off the total.
  const firstKey = (await db.get(db.query(db.ref(bob.db, "jokes"), db.orderByKey(), db.limitToFirst(1)))).val();
  const jokeId = Object.keys(firstKey)[0];
  await db.set(db.ref(bob.db, `votes/${bob.uid}/${jokeId}`), true);
  check(await until(db.ref(ada.db, `jokes/${jokeId}/votes`), (votes) => votes === 1), "a vote counted by the seed functions");
  check(await until(db.ref(ada.db, `board/${jokeId}/votes`), (votes) => votes === 1), "the joke on the top-10 board");
  check(await denied(db.runTransaction(db.ref(bob.db, `jokes/${jokeId}/votes`), (votes) => (votes || 0) + 1)), "a client moving the total");
  check(await denied(db.set(db.ref(bob.db, `jokes/${jokeId}/votes`), 10)), "a vote that jumps");
  check(await denied(db.set(db.ref(bob.db, `votes/${ada.uid}/${jokeId}`), true)), "voting for someone else");

  // Profiles with followers (seed 002): own profile, a username index, a follow as one fan-out update.
  await db.set(db.ref(ada.db, `users/${ada.uid}`), { username: "ada" });
  await db.set(db.ref(ada.db, "usernames/ada"), ada.uid);
  await db.set(db.ref(bob.db, `users/${bob.uid}`), { username: "bob" });
  check((await db.get(db.ref(bob.db, "usernames/ada"))).val() === ada.uid, "username lookup");
  check(await denied(db.set(db.ref(bob.db, "usernames/ada"), bob.uid)), "taking a taken username");
  await db.update(db.ref(bob.db), { [`followers/${ada.uid}/${bob.uid}`]: true });
  check(await until(db.ref(bob.db, `users/${ada.uid}/followers`), (n) => n === 1), "the follower count set by the seed functions");
  check(await denied(db.set(db.ref(bob.db, `users/${ada.uid}/followers`), 2)), "a client moving a follower count");
  check(await denied(db.set(db.ref(bob.db, `users/${ada.uid}/username`), "hacked")), "editing another's profile");

  // Per-user posts (seed 003): only with a verified address, server timestamps, private to their author.
  const post = { title: "Hello", body: "First post", createdAt: db.serverTimestamp() };
  check(await denied(db.push(db.ref(ada.db, `posts/${ada.uid}`), post)), "posting before verifying the address");
  await auth.sendEmailVerification(ada.user);
  const codes = (await (await fetch(`${base}/emulator/v1/projects/${projectId}/oobCodes`)).json()).oobCodes;
  const code = codes.filter((c) => c.email === ada.user.email && c.requestType === "VERIFY_EMAIL").pop().oobCode;
  await auth.applyActionCode(ada.auth, code);
  await ada.user.getIdToken(true);  // a fresh token carries email_verified
  const posted = await db.push(db.ref(ada.db, `posts/${ada.uid}`), post);
  const stored = (await db.get(posted)).val();
  check(typeof stored.createdAt === "number" && Math.abs(stored.createdAt - Date.now()) < 60000, "server timestamp");
  check(await denied(db.get(db.ref(bob.db, `posts/${ada.uid}`))), "reading another's posts");

  // Message board (seed 004): push, edit, delete; the five events, in time order.
  const message = await db.push(db.ref(ada.db, "messages"), { text: "hi all", author: ada.uid, sentAt: db.serverTimestamp() });
  // (Before bob listens: the SDK shows its own refused delete as child_removed, then child_added back.)
  check(await denied(db.remove(db.ref(bob.db, `messages/${message.key}`))), "deleting another's message");
  const events = [];
  const board = db.query(db.ref(bob.db, "messages"), db.orderByChild("sentAt"));
  const stops = [
    db.onChildAdded(board, (c) => events.push(`added ${c.val().text}`)),
    db.onChildChanged(board, (c) => events.push(`changed ${c.val().text}`)),
    db.onChildRemoved(board, (c) => events.push(`removed ${c.val().text}`)),
  ];
  for (let i = 0; i < 50 && events.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
  await db.set(db.ref(ada.db, `messages/${message.key}/text`), "hi everyone");
  for (let i = 0; i < 50 && events.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
  await db.remove(db.ref(ada.db, `messages/${message.key}`));
  for (let i = 0; i < 50 && events.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
  stops.forEach((stop) => stop());
  check(JSON.stringify(events) === JSON.stringify(["added hi all", "changed hi everyone", "removed hi everyone"]), `board events: ${events}`);

  await Promise.all(apps.map((app) => deleteApp(app)));
  console.log(JSON.stringify({ ok: true }));
  process.exit(0);
})().catch((error) => {
  console.log(JSON.stringify({ ok: false, error: `${error.code || ""} ${error.stack || error}` }));
  process.exit(1);
});
