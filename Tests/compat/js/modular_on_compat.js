// The modular API of the official Firebase JS SDK (`firebase/app`, `firebase/database`, `firebase/auth`),
// as far as the scenarios in this folder use it, on top of Google's browser "compat" bundles (loaded
// before this file). The compat classes delegate to the same implementation as the modular functions,
// so the scenarios (*.cjs, written against the modular API for node) run unchanged in Chromium.
// runner.html loads this file and hands its modules to the scenarios' `require`.
//
// Modular objects are represented by the compat ones (a compat Reference or Query is the modular
// Reference or Query of this shim), except data snapshots and transaction results, which are wrapped
// so that they have the modular shape (`size`, `priority`, child snapshots wrapped too).
// A function the scenarios do not use is not here: add it when a scenario needs it.
(function () {
  "use strict";
  const compat = globalThis.firebase;
  if (!compat || !compat.database || !compat.auth) {
    throw new Error("modular_on_compat.js needs firebase-app-compat, firebase-database-compat and firebase-auth-compat");
  }

  // ---- firebase/app --------------------------------------------------------------------------------
  const app = {
    initializeApp: (options, name) => (name === undefined ? compat.initializeApp(options) : compat.initializeApp(options, name)),
    getApp: (name) => (name === undefined ? compat.app() : compat.app(name)),
    getApps: () => compat.apps.slice(),
    deleteApp: (instance) => instance.delete(),
    SDK_VERSION: compat.SDK_VERSION,
  };

  // ---- firebase/database ---------------------------------------------------------------------------
  class DataSnapshot {
    constructor(snapshot) { this._compat = snapshot; }
    get key() { return this._compat.key; }
    get ref() { return this._compat.ref; }
    get size() { return this._compat.numChildren(); }
    get priority() { return this._compat.getPriority(); }
    val() { return this._compat.val(); }
    exportVal() { return this._compat.exportVal(); }
    toJSON() { return this._compat.toJSON(); }
    exists() { return this._compat.exists(); }
    hasChild(path) { return this._compat.hasChild(path); }
    hasChildren() { return this._compat.hasChildren(); }
    child(path) { return new DataSnapshot(this._compat.child(path)); }
    forEach(action) { return this._compat.forEach((child) => action(new DataSnapshot(child))); }
  }
  const snapshot = (compatSnapshot) => (compatSnapshot == null ? compatSnapshot : new DataSnapshot(compatSnapshot));

  // Query constraints: applied in order, as the modular `query(...)` does.
  const constraint = (method) => (...args) => ({ _apply: (q) => q[method](...args) });

  // onValue/onChild*: (query, callback, cancelCallback?, options?) or (query, callback, options);
  // returns the function that removes exactly this listener.
  const listen = (eventType) => (query, callback, cancelOrOptions, options) => {
    let cancel = cancelOrOptions;
    if (cancelOrOptions !== null && typeof cancelOrOptions === "object") { options = cancelOrOptions; cancel = undefined; }
    const onlyOnce = Boolean(options && options.onlyOnce);
    let registered = true;
    const unsubscribe = () => { if (registered) { registered = false; query.off(eventType, listener); } };
    const listener = (compatSnapshot, previousChildName) => {
      if (onlyOnce) unsubscribe();
      callback(snapshot(compatSnapshot), previousChildName);
    };
    if (typeof cancel === "function") query.on(eventType, listener, (error) => cancel(error));
    else query.on(eventType, listener);
    return unsubscribe;
  };

  class TransactionResult {
    constructor(committed, compatSnapshot) { this.committed = committed; this.snapshot = snapshot(compatSnapshot); }
    toJSON() { return { committed: this.committed, snapshot: this.snapshot.toJSON() }; }
  }

  const database = {
    getDatabase: (instance = compat.app(), url) => (url === undefined ? instance.database() : instance.database(url)),
    connectDatabaseEmulator: (db, host, port, options = {}) => db.useEmulator(host, port, options),
    goOffline: (db) => db.goOffline(),
    goOnline: (db) => db.goOnline(),
    ref: (db, path) => (path === undefined ? db.ref() : db.ref(path)),
    refFromURL: (db, url) => db.refFromURL(url),
    child: (parent, path) => parent.child(path),
    set: (reference, value) => reference.set(value),
    setWithPriority: (reference, value, priority) => reference.setWithPriority(value, priority),
    setPriority: (reference, priority) => reference.setPriority(priority),
    update: (reference, values) => reference.update(values),
    remove: (reference) => reference.remove(),
    push: (parent, value) => parent.push(value),
    get: (query) => query.get().then(snapshot),
    query: (q, ...constraints) => constraints.reduce((current, c) => c._apply(current), q),
    orderByChild: constraint("orderByChild"),
    orderByKey: constraint("orderByKey"),
    orderByValue: constraint("orderByValue"),
    orderByPriority: constraint("orderByPriority"),
    startAt: constraint("startAt"),
    startAfter: constraint("startAfter"),
    endAt: constraint("endAt"),
    endBefore: constraint("endBefore"),
    equalTo: constraint("equalTo"),
    limitToFirst: constraint("limitToFirst"),
    limitToLast: constraint("limitToLast"),
    onValue: listen("value"),
    onChildAdded: listen("child_added"),
    onChildChanged: listen("child_changed"),
    onChildRemoved: listen("child_removed"),
    onChildMoved: listen("child_moved"),
    off: (query, eventType) => query.off(eventType),
    runTransaction: (reference, update, options) =>
      reference.transaction(update, undefined, options && options.applyLocally)
        .then((result) => new TransactionResult(result.committed, result.snapshot)),
    onDisconnect: (reference) => reference.onDisconnect(),
    serverTimestamp: () => compat.database.ServerValue.TIMESTAMP,
    increment: (delta) => compat.database.ServerValue.increment(delta),
  };

  // ---- firebase/auth -------------------------------------------------------------------------------
  // In node, the modular getAuth keeps the signed-in user in memory; so does this one (the compat
  // default is IndexedDB, which would carry a user from one page load to the next). Every auth
  // operation waits for that switch.
  const ready = new WeakMap();
  const settled = (auth) => ready.get(auth) || Promise.resolve();
  const afterSwitch = (call) => (auth, ...args) => settled(auth).then(() => call(auth, ...args));
  const userCall = (call) => (user, ...args) => settled(user._hearthAuth).then(() => call(user, ...args));
  // Results carry compat users; each remembers its Auth so userCall can wait for the switch.
  const credential = (auth) => (result) => { if (result && result.user) result.user._hearthAuth = auth; return result; };

  const auth = {
    getAuth: (instance = compat.app()) => {
      const a = instance.auth();
      if (!ready.has(a)) ready.set(a, a.setPersistence(compat.auth.Auth.Persistence.NONE));
      return a;
    },
    connectAuthEmulator: (a, url, options) => a.useEmulator(url, options),
    createUserWithEmailAndPassword: afterSwitch((a, email, password) =>
      a.createUserWithEmailAndPassword(email, password).then(credential(a))),
    signInWithEmailAndPassword: afterSwitch((a, email, password) =>
      a.signInWithEmailAndPassword(email, password).then(credential(a))),
    signInAnonymously: afterSwitch((a) => a.signInAnonymously().then(credential(a))),
    signOut: afterSwitch((a) => a.signOut()),
    applyActionCode: afterSwitch((a, code) => a.applyActionCode(code)),
    sendPasswordResetEmail: afterSwitch((a, email, settings) => a.sendPasswordResetEmail(email, settings)),
    verifyPasswordResetCode: afterSwitch((a, code) => a.verifyPasswordResetCode(code)),
    confirmPasswordReset: afterSwitch((a, code, password) => a.confirmPasswordReset(code, password)),
    onAuthStateChanged: (a, next, error) => a.onAuthStateChanged(next, error),
    updateProfile: userCall((user, profile) => user.updateProfile(profile)),
    sendEmailVerification: userCall((user, settings) => user.sendEmailVerification(settings)),
    deleteUser: userCall((user) => user.delete()),
    reload: userCall((user) => user.reload()),
    getIdToken: userCall((user, forceRefresh) => user.getIdToken(forceRefresh)),
  };

  globalThis.modularOnCompat = { "firebase/app": app, "firebase/database": database, "firebase/auth": auth };
})();
