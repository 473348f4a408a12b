// Drives the official Firebase JS SDK (modular API, node build) against a Hearth server.
// Usage: node realtime.cjs HOST PORT NAMESPACE SCENARIO   (NODE_PATH = the SDK's node_modules)
// Without node_modules (FIREBASE_JS_SDK_DIR), js_sdk_support.py runs this same file in headless Chromium:
// runner.html, on Google's compat bundles of the SDK and modular_on_compat.js.
// Prints one JSON line {"ok": true, ...} or {"ok": false, "error": ...}; exits 0 or 1.
const { initializeApp, deleteApp } = require("firebase/app");
const db = require("firebase/database");

const [host, port, namespace, scenario] = process.argv.slice(2);
const apps = [];

function open(name) {
  const app = initializeApp({ databaseURL: `http://${host}:${port}?ns=${namespace}`, projectId: "demo-hearth" }, name);
  apps.push(app);
  const database = db.getDatabase(app);
  db.connectDatabaseEmulator(database, host, Number(port));
  return database;
}

function waitFor(reference, predicate, what, eventType = "value") {
  return new Promise((resolve, reject) => {
    let done = false, off = null;
    const finish = () => { done = true; clearTimeout(timer); if (off) off(); };
    const timer = setTimeout(() => { finish(); reject(new Error(`timed out waiting for ${what}`)); }, 10000);
    // The callback may run before onValue returns (cached data): `off` is then still null.
    off = db.onValue(reference, (snapshot) => {
      if (!done && predicate(snapshot)) { finish(); resolve(snapshot); }
    }, (error) => { finish(); reject(error); });
    if (done) off();
  });
}

function assertEqual(actual, expected, what) {
  const a = JSON.stringify(actual), e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: got ${a}, expected ${e}`);
}

const scenarios = {
  // A writes; B's listener sees each change; get() reads from the server.
  async roundtrip() {
    const a = open("a"), b = open("b");
    const seen = [];
    const stop = db.onValue(db.ref(b, "js/doc"), (s) => seen.push(s.val()));
    await db.set(db.ref(a, "js/doc"), { text: "héllo ✓", n: 1.5, flag: true, list: [1, 2, 3] });
    await waitFor(db.ref(b, "js/doc"), (s) => s.val() && s.val().n === 1.5, "B to see the set");
    await db.update(db.ref(a, "js/doc"), { n: 2, "nested/deep": "x" });
    await waitFor(db.ref(b, "js/doc"), (s) => s.val() && s.val().n === 2, "B to see the update");
    const fetched = await db.get(db.ref(b, "js/doc/list"));
    assertEqual(fetched.val(), [1, 2, 3], "get of an array");
    await db.remove(db.ref(a, "js/doc"));
    await waitFor(db.ref(b, "js/doc"), (s) => !s.exists(), "B to see the removal");
    stop();
    return { events: seen.length };
  },

  // A limit query slides as items arrive and its child events come in order.
  async query() {
    const a = open("a"), b = open("b");
    const scores = db.ref(a, "js/scores");
    await db.set(scores, null);
    for (let i = 1; i <= 10; i++) await db.set(db.ref(a, `js/scores/p${i}`), { score: i * 10 });
    const top = db.query(db.ref(b, "js/scores"), db.orderByChild("score"), db.limitToLast(3));
    const first = await waitFor(top, (s) => s.size === 3, "the first window");
    const keys = []; first.forEach((c) => { keys.push(c.key); });
    assertEqual(keys, ["p8", "p9", "p10"], "top three");
    const events = [];
    const offAdded = db.onChildAdded(top, (c) => events.push(`+${c.key}`));
    const offRemoved = db.onChildRemoved(top, (c) => events.push(`-${c.key}`));
    await db.set(db.ref(a, "js/scores/p11"), { score: 1000 });
    await waitFor(top, (s) => s.hasChild("p11"), "p11 to enter the window");
    const window = await db.get(top);
    const after = []; window.forEach((c) => { after.push(c.key); });
    assertEqual(after, ["p9", "p10", "p11"], "window after a new leader");
    offAdded(); offRemoved();
    if (!events.includes("+p11") || !events.includes("-p8")) throw new Error(`child events: ${events}`);
    return { events };
  },

  // Twenty clients increment one counter with transactions: no update is lost. Under this much
  // contention the SDK may give up after 25 attempts ("maxretry", as against Firebase); the app
  // then runs the transaction again, as apps do.
  async transaction() {
    const clients = Array.from({ length: 20 }, (_, i) => open(`t${i}`));
    await db.set(db.ref(clients[0], "js/counter"), 0);
    let maxretries = 0;
    await Promise.all(clients.map(async (client) => {
      for (let i = 0; i < 5; i++) {
        for (;;) {
          try {
            const result = await db.runTransaction(db.ref(client, "js/counter"), (value) => (value || 0) + 1);
            if (!result.committed) throw new Error("a transaction did not commit");
            break;
          } catch (error) {
            if (String(error.message) !== "maxretry") throw error;
            maxretries += 1;
          }
        }
      }
    }));
    const final = await db.get(db.ref(clients[1], "js/counter"));
    assertEqual(final.val(), 100, "counter after 100 increments");
    return { counter: final.val(), maxretries };
  },

  // onDisconnect runs on the server when the client goes away; server timestamps resolve.
  async ondisconnect() {
    const a = open("a"), b = open("b");
    const presence = db.ref(a, "js/presence/a");
    await db.set(presence, { online: true });
    await db.onDisconnect(presence).set({ online: false, last: db.serverTimestamp() });
    await waitFor(db.ref(b, "js/presence/a"), (s) => s.val() && s.val().online === true, "online");
    db.goOffline(a);
    const gone = await waitFor(db.ref(b, "js/presence/a"), (s) => s.val() && s.val().online === false, "offline");
    if (typeof gone.val().last !== "number" || Math.abs(gone.val().last - Date.now()) > 60000) {
      throw new Error(`server timestamp: ${gone.val().last}`);
    }
    return { last: gone.val().last };
  },

  // .info/connected goes true; .info/serverTimeOffset is a number; a push id orders chronologically.
  async info() {
    const a = open("a");
    await waitFor(db.ref(a, ".info/connected"), (s) => s.val() === true, ".info/connected");
    const offset = await waitFor(db.ref(a, ".info/serverTimeOffset"), (s) => typeof s.val() === "number", "offset");
    const first = db.push(db.ref(a, "js/feed"), { text: "one" });
    const second = db.push(db.ref(a, "js/feed"), { text: "two" });
    await Promise.all([first, second]);
    const feed = await db.get(db.query(db.ref(a, "js/feed"), db.limitToLast(2)));
    const texts = []; feed.forEach((c) => { texts.push(c.val().text); });
    assertEqual(texts, ["one", "two"], "push order");
    return { offset: offset.val() };
  },

  // Rules decide: a denied write rejects the promise with PERMISSION_DENIED, a denied listen cancels.
  async denied() {
    const a = open("a");
    let writeError = null;
    try { await db.set(db.ref(a, "locked/x"), 1); } catch (error) { writeError = error; }
    if (!writeError || !/PERMISSION_DENIED|permission_denied/i.test(String(writeError.code || writeError.message))) {
      throw new Error(`write to a locked path: ${writeError}`);
    }
    let listenError = null;
    await new Promise((resolve) => {
      db.onValue(db.ref(a, "locked"), () => resolve(), (error) => { listenError = error; resolve(); });
    });
    if (!listenError) throw new Error("a listen on a locked path was not cancelled");
    return { write: String(writeError.code), listen: String(listenError.code || listenError.message) };
  },
};

(async () => {
  const timer = setTimeout(() => { console.log(JSON.stringify({ ok: false, error: "scenario timed out" })); process.exit(1); }, 60000);
  try {
    const result = await scenarios[scenario]();
    console.log(JSON.stringify({ ok: true, ...result }));
    clearTimeout(timer);
    await Promise.all(apps.map((app) => deleteApp(app)));
    process.exit(0);
  } catch (error) {
    console.log(JSON.stringify({ ok: false, error: String(error && error.stack || error) }));
    process.exit(1);
  }
})();
