// A stand-in for gapi.iframes (https://apis.google.com/js/api.js), written for the tests: the browser in
// test_auth_provider_widget.py resolves apis.google.com to a local server that serves this file, so the
// JS SDK in the app's page and Hearth's /emulator/auth/iframe both load it, as they load Google's library
// in real use. It does what those two use of gapi.iframes: open a child iframe, ping it, register message
// handlers, send messages whose answers come back as arrays. Its wire is its own (postMessage with a
// `gapiStandIn` field): only the two ends' calls need to match Google's library, not its messages.
(function () {
  "use strict";
  const crossOriginIframesFilter = function () { return true; };
  const peers = [];
  const awaitingReply = new Map();
  let nextCall = 1;

  function Peer(target) {
    this.target = target;          // () => the other end's window
    this.handlers = {};
    this.unhandled = [];           // calls that came before their handler was registered
    this.ready = false;            // a child is ready once its page said hello
    this.outbox = [];
    peers.push(this);
  }
  Peer.prototype.post = function (message) {
    if (this.ready) this.target().postMessage(message, "*"); else this.outbox.push(message);
  };
  Peer.prototype.markReady = function () {
    if (this.ready) return;
    this.ready = true;
    for (const message of this.outbox.splice(0)) this.target().postMessage(message, "*");
  };
  Peer.prototype.register = function (name, handler) {
    this.handlers[name] = handler;
    const waiting = this.unhandled.filter((call) => call.name === name);
    this.unhandled = this.unhandled.filter((call) => call.name !== name);
    for (const call of waiting) answer(this, call);
  };
  Peer.prototype.send = function (name, data, callback) {
    const id = nextCall++;
    awaitingReply.set(id, callback || function () {});
    this.post({gapiStandIn: "call", id, name, data});
  };
  Peer.prototype.ping = function (callback) {
    return new Promise((resolve) => this.send("_ping", null, (replies) => { if (callback) callback(replies); resolve(replies); }));
  };
  Peer.prototype.restyle = function () { return Promise.resolve(); };

  async function answer(peer, call) {
    let result;
    if (call.name === "_ping") {
      result = [true];
    } else if (peer.handlers[call.name]) {
      result = [await peer.handlers[call.name](call.data)];
    } else {
      peer.unhandled.push(call);
      return;
    }
    peer.target().postMessage({gapiStandIn: "reply", id: call.id, result}, "*");
  }

  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!message || typeof message !== "object" || !message.gapiStandIn) return;
    const peer = peers.find((candidate) => candidate.target() === event.source);
    if (!peer) return;
    if (message.gapiStandIn === "hello") peer.markReady();
    else if (message.gapiStandIn === "call") answer(peer, message);
    else if (message.gapiStandIn === "reply") {
      const callback = awaitingReply.get(message.id);
      awaitingReply.delete(message.id);
      if (callback) callback(message.result);
    }
  });

  let parentPeer = null;
  const context = {
    open(options, onOpen) {
      const frame = document.createElement("iframe");
      for (const [name, value] of Object.entries(options.attributes || {})) {
        if (name === "style") Object.assign(frame.style, value); else frame.setAttribute(name, value);
      }
      frame.src = options.url;
      const peer = new Peer(() => frame.contentWindow);
      (options.where || document.body).appendChild(frame);
      return Promise.resolve(onOpen ? onOpen(peer) : peer);
    },
    getParentIframe() {
      if (!parentPeer) {
        parentPeer = new Peer(() => window.parent);
        parentPeer.ready = true;
        window.parent.postMessage({gapiStandIn: "hello"}, "*");
      }
      return parentPeer;
    },
  };

  window.gapi = window.gapi || {};
  window.gapi.iframes = {getContext: () => context, CROSS_ORIGIN_IFRAMES_FILTER: crossOriginIframesFilter, Iframe: Peer};
  window.gapi.load = function (name, options) {
    const callback = typeof options === "function" ? options : options && options.callback;
    if (callback) setTimeout(callback, 0);
  };
  // api.js?onload=NAME calls window[NAME] once loaded (the SDK loads it that way).
  const script = document.currentScript;
  const onload = script && new URL(script.src).searchParams.get("onload");
  if (onload && typeof window[onload] === "function") window[onload]();
})();
