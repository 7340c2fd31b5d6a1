// schedplay engine worker: runs one arm of the page's simulation in this
// dedicated Web Worker, off the main thread. It is the page's own Go
// program (the module the page compiled, posted in the "init" message) in
// its engine role (self.schedplayRole); see wasm/worker.go for the
// messages. Messages that arrive before the Go program listens are kept
// and handed over when it starts.
"use strict";

// Boot stamps (ms since the epoch, so that the page can place them on
// its own timeline): sent as a "boot" message before the Go program runs.
const abs = () => performance.timeOrigin + performance.now();
const boot = { t: "boot", script: abs() };

importScripts("wasm_exec.js");

self.schedplayRole = "engine";

// ebiten's package initialisation reads the DOM, which a worker lacks; a
// do-nothing stand-in lets it finish (the engine role never draws).
const stub = new Proxy(function () {}, {
  get(t, k) {
    if (k === Symbol.toPrimitive) return () => 0;
    if (k === "then") return undefined;
    return stub;
  },
  apply() { return stub; },
  construct() { return stub; },
});
self.document = stub;
self.window = stub;
self.screen = stub;
self.Document = { prototype: {} };
Object.defineProperty(self.Document.prototype, "hidden", { get() { return false; }, configurable: true });

const early = [];
self.schedplayDeliver = (m) => early.push(m);
self.schedplayStarted = () => {
  for (const m of early.splice(0)) self.schedplayDeliver(m);
};

// A worker the page prestarted gets the module "held": it instantiates it
// at once but runs its Go program only on "start", which the page's own
// Go program sends once it has initialised (wasm/client.go,
// startPrestartedWorkers), so that the two do not compile the same
// functions at the same time.
let instance = null;
let go = null;
let startWanted = false;
let running = false;

function run() {
  if (running || !instance || !startWanted) return;
  running = true;
  boot.run = abs();
  self.postMessage(boot);
  // An exit is reported as an error event (the page's worker.onerror).
  go.run(instance).then(
    () => setTimeout(() => { throw new Error("the engine's Go program exited"); }),
    (err) => setTimeout(() => { throw err; }),
  );
}

self.onmessage = async (e) => {
  const m = e.data;
  if (m.t === "start") {
    startWanted = true;
    run();
    return;
  }
  if (m.t !== "init") {
    self.schedplayDeliver(m);
    return;
  }
  self.postMessage({ t: "got" }); // the page waits for this before starting its Go program
  try {
    boot.init = abs();
    go = new Go();
    instance = await WebAssembly.instantiate(m.module, go.importObject);
    boot.instantiated = abs();
    if (!m.held) startWanted = true;
    run();
  } catch (err) {
    setTimeout(() => { throw err; });
  }
};
