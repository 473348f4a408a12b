// Runs one scenario of Tests/Fixtures/client-scenarios through the official Firebase JS SDK (modular API,
// node build) and prints {"ok": true} when it raised exactly the expected events, or {"ok": false,
// "error": …, "events": [...]} otherwise. HearthClient runs the same files (ClientScenarioTests.swift), so
// both SDKs raise the same events.
// Usage: node client_scenarios.cjs HOST PORT NAMESPACE SCENARIO_FILE   (NODE_PATH = the SDK's node_modules)
// Without node_modules (FIREBASE_JS_SDK_DIR), js_sdk_support.py runs this same file in headless Chromium:
// runner.html, on Google's compat bundles of the SDK and modular_on_compat.js.
const fs = require("fs");
const { initializeApp } = require("firebase/app");
const db = require("firebase/database");

const [host, port, namespace, file] = process.argv.slice(2);
const scenario = JSON.parse(fs.readFileSync(file, "utf8"));

function open(name) {
  const app = initializeApp({ databaseURL: `http://${host}:${port}?ns=${namespace}`, projectId: "demo-hearth" }, name);
  const database = db.getDatabase(app);
  db.connectDatabaseEmulator(database, host, Number(port));
  return database;
}

// Objects compared with their keys sorted, as the Swift runner compares JSON values.
function canonical(value) {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(canonical);
  const out = {};
  for (const key of Object.keys(value).sort()) out[key] = canonical(value[key]);
  return out;
}

function query(reference, spec) {
  if (!spec) return reference;
  const constraints = [];
  if (spec.orderBy === "key") constraints.push(db.orderByKey());
  else if (spec.orderBy === "value") constraints.push(db.orderByValue());
  else if (spec.orderBy === "priority") constraints.push(db.orderByPriority());
  else if (spec.orderBy) constraints.push(db.orderByChild(spec.orderBy));
  if ("startAt" in spec) constraints.push(db.startAt(spec.startAt));
  if ("endAt" in spec) constraints.push(db.endAt(spec.endAt));
  if ("equalTo" in spec) constraints.push(db.equalTo(spec.equalTo));
  if ("limitToFirst" in spec) constraints.push(db.limitToFirst(spec.limitToFirst));
  if ("limitToLast" in spec) constraints.push(db.limitToLast(spec.limitToLast));
  return db.query(reference, ...constraints);
}

const registrations = {
  child_added: db.onChildAdded, child_removed: db.onChildRemoved, child_changed: db.onChildChanged,
  child_moved: db.onChildMoved, value: db.onValue,
};

async function main() {
  const me = open("self"), other = open("other");
  const events = [];
  for (const listener of scenario.listen) {
    const q = query(db.ref(me, listener.path), listener.query);
    for (const type of listener.events) {
      registrations[type](q, (snapshot, previous) => {
        events.push([listener.id, type, type === "value" ? null : snapshot.key,
                     type === "value" || type === "child_removed" ? null : (previous ?? null), canonical(snapshot.val())]);
      });
    }
  }
  const waitFor = (count) => new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      if (events.length >= count) return resolve();
      if (Date.now() - started > 10000) return reject(new Error(`timed out waiting for ${count} events; got ${JSON.stringify(events)}`));
      setTimeout(poll, 5);
    };
    poll();
  });
  for (const step of scenario.steps) {
    const client = step.by === "other" ? other : me;
    if ("wait" in step) await waitFor(step.wait);
    else if ("set" in step) await db.set(db.ref(client, step.set), step.value);
    else if ("update" in step) await db.update(db.ref(client, step.update), step.values);
    else if ("increment" in step) await db.runTransaction(db.ref(client, step.increment), (current) => (current || 0) + 1);
  }
  await new Promise((resolve) => setTimeout(resolve, 150));
  const expected = scenario.expect.map((row) => [row[0], row[1], row[2], row[3], canonical(row[4])]);
  if (JSON.stringify(events) !== JSON.stringify(expected)) {
    return { ok: false, error: `events differ from ${file}`, events, expected };
  }
  return { ok: true, events: events.length };
}

main().then((result) => {
  console.log(JSON.stringify(result));
  process.exit(result.ok ? 0 : 1);
}, (error) => {
  console.log(JSON.stringify({ ok: false, error: String(error && error.stack || error) }));
  process.exit(1);
});
