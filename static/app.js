// schedplay page: loads the Go simulator (schedplay.wasm, which draws on
// the ebiten canvas and exposes window.sim) and drives it from the control
// panel. The panel is generated from the simulator's own tables (knobs,
// presets, workload kinds) and re-synced from sim.state() a few times a
// second. The URL fragment is the share link: the Go side rewrites it on
// every change and re-applies it on hashchange.
"use strict";

(() => {
  const WASM_URL = "schedplay.wasm";
  const SYNC_MS = 250;
  // Simulated seconds per wall second; 0 = as fast as the frame budget allows.
  const SPEEDS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 0];
  const GROUPS = [
    ["feature", "Features"],
    ["tunable", "Tunables"],
    ["cost", "Costs"],
    ["model", "Model"],
  ];
  const EXITED = "Go program has already exited";

  const $ = (id) => document.getElementById(id);

  let sim = null;          // window.sim once the Go program is running
  let fatalMsg = "";       // set once the simulator cannot go on
  let localError = "";     // the last error a setter returned
  let dismissedError = ""; // the banner text the user hid
  let knobDefs = [];
  let knobIndex = {};       // knob name -> its definition
  let kinds = {};          // workload kind name -> {Name, Doc, Keys}
  let presetInfo = {};     // preset option value -> {Name, Kind, Title}
  let defaults = {};       // knob name -> value before any setting, for this machine
  let defaultsKey = "";
  let knobsBuiltFor = null; // the A/B flag the knob table was built for
  let openGroups = { feature: true };
  let workloadsDirty = false; // the editor holds text not yet accepted
  let forceSync = false;      // the next sync overwrites focused fields too
  let syncTimer = 0;
  // Loading: what the page is waiting for, so that it never just says
  // "Loading" — after a few seconds without a first frame it says what.
  const bootStart = Date.now();
  // loadTimes (window.schedplayLoad) are performance.now() stamps of the
  // load: the module compiled, instantiated; the Go side adds its own.
  const loadTimes = (window.schedplayLoad = {});
  let bootPhase = "download"; // download, compile, start, run
  let wasmBytes = 0;          // downloaded so far
  let stateFailure = "";      // why the last sim.state() gave nothing
  // Fields being edited when a new link arrived: their pending text
  // belongs to the old simulation and is not committed on blur.
  const stale = new WeakSet();

  // ---- small helpers ------------------------------------------------------

  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "class") e.className = v;
      else if (k === "dataset") Object.assign(e.dataset, v);
      else if (k in e) e[k] = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c != null) e.append(c);
    }
    return e;
  }

  // isStale reports (once) whether a field's change event carries text
  // from before a new link, and resyncs it instead.
  function isStale(c) {
    if (!stale.has(c)) return false;
    stale.delete(c);
    sync();
    return true;
  }

  function focusCanvas() {
    const c = document.querySelector("canvas");
    if (c) c.focus({ preventScroll: true });
  }

  function fmtSpeed(x) {
    if (!isFinite(x) || x <= 0) return "0";
    if (x >= 100) return x.toFixed(0);
    if (x >= 1) return x.toFixed(2);
    return x.toPrecision(2);
  }

  // One formatter for every number: toLocaleString builds a new one per
  // call (183 ms of the load's main-thread profile, the panel's tables).
  const intFormat = new Intl.NumberFormat("en-US");
  function fmtInt(n) {
    return intFormat.format(Number(n || 0));
  }

  function isTrue(v) {
    return ["true", "1", "on", "yes"].includes(String(v).trim().toLowerCase());
  }

  // api calls window.sim[name]; a Go program that has exited throws on
  // every call, which ends the page's session with a clear message.
  function api(name, ...args) {
    if (!sim || fatalMsg) return null;
    try {
      return sim[name](...args);
    } catch (e) {
      const msg = String((e && e.message) || e);
      if (msg.includes(EXITED)) {
        fatal("the Go program has exited" + goReason());
      } else {
        localError = `${name}: ${msg}`;
        if (name === "state") stateFailure = msg;
        renderError();
      }
      return null;
    }
  }

  // report shows a setter's {ok, error}; it returns whether it succeeded.
  function report(res, field) {
    if (!res) return false;
    if (res.ok) {
      localError = "";
      if (field) showFieldError(field, "");
    } else {
      localError = res.error;
      if (field) showFieldError(field, res.error);
    }
    sync();
    return !!res.ok;
  }

  function showFieldError(id, msg) {
    const e = $(id);
    e.textContent = msg;
    e.hidden = !msg;
  }

  // ---- errors ---------------------------------------------------------------

  function currentErrorText(state) {
    if (fatalMsg) return fatalMsg;
    const parts = [];
    if (localError) parts.push(localError);
    if (state && state.error && state.error !== localError) parts.push(state.error);
    if (window.simError) parts.push(String(window.simError));
    return parts.join("\n");
  }

  let lastState = null;

  function renderError() {
    const text = currentErrorText(lastState);
    $("error-text").textContent = text;
    $("error").hidden = !text || (text === dismissedError && !fatalMsg);
  }

  function goReason() {
    let why = "";
    if (window.simError) why += ": " + window.simError;
    if (!hasWebGL2()) why += " — this browser gave no WebGL2 context, which the canvas needs (try another browser or enable hardware acceleration)";
    return why;
  }

  // hasWebGL2 probes once: each probe creates a WebGL context (50-150 ms
  // under SwiftShader, and browsers keep at most 16 — the oldest, which
  // may be the canvas's own, is lost), and the loading message asks every
  // half second. The probe's context is released at once.
  let webgl2 = null;
  function hasWebGL2() {
    if (webgl2 === null) {
      try {
        const gl = document.createElement("canvas").getContext("webgl2");
        webgl2 = !!gl;
        const lose = gl && gl.getExtension("WEBGL_lose_context");
        if (lose) lose.loseContext();
      } catch (e) {
        webgl2 = false;
      }
    }
    return webgl2;
  }

  // fatal: the simulator cannot run; say so in the banner and over the
  // canvas, never leaving a blank tab.
  function fatal(why) {
    if (fatalMsg) return;
    fatalMsg = `The simulator stopped: ${why}. Reload the page to start again; the browser console has details.`;
    clearInterval(syncTimer);
    const loading = $("loading");
    $("loading-text").textContent = fatalMsg;
    loading.classList.add("failed");
    loading.hidden = false;
    $("status").textContent = "stopped";
    for (const c of $("panel").querySelectorAll("button, input, select, textarea")) {
      if (c.id !== "error-dismiss" && c.id !== "share-url") c.disabled = true;
    }
    renderError();
  }

  // ---- loading ---------------------------------------------------------------

  async function boot() {
    if (typeof Go !== "function") {
      fatal("wasm_exec.js did not load (it is a build output: run `make wasm`, or `make serve` which builds it)");
      return;
    }
    if (typeof WebAssembly !== "object") {
      fatal("this browser has no WebAssembly");
      return;
    }
    prestartWorkers();
    const go = new Go();
    let instance;
    watchLoading();
    try {
      instance = await instantiate(go);
    } catch (e) {
      fatal(`the WebAssembly module failed to load: could not load ${WASM_URL}: ${(e && e.message) || e}`);
      return;
    }
    loadTimes.instantiated = performance.now();
    bootPhase = "start";
    $("loading-text").textContent = "Starting the simulator…";
    let running;
    try {
      running = go.run(instance);
    } catch (e) {
      fatal(`the Go program did not start: ${(e && e.message) || e}`);
      return;
    }
    running.then(
      () => fatal("the Go program exited" + goReason()),
      (e) => fatal(`the Go program crashed: ${(e && e.message) || e}` + goReason()),
    );
    waitForSim(Date.now());
  }

  // instantiate compiles the wasm while it streams in when the server sends
  // application/wasm, and falls back to an ArrayBuffer when the MIME check
  // (or streaming) fails.
  // The module is compiled once (streamed while it downloads) and kept in
  // window.schedplayModule: the engine workers instantiate the same
  // compiled module (static/worker.js) without fetching it again.
  async function instantiate(go) {
    const module = await compile();
    window.schedplayModule = module;
    loadTimes.compiled = performance.now();
    bootPhase = "compile";
    // Hand the module to the prestarted workers and wait (at most
    // 500 ms) until each has it before the Go program takes the main
    // thread. Chromium forwards a message posted to a dedicated worker
    // before its script has run only from a task of the page's main
    // thread: posted and then left to the busy start of the Go program,
    // the module reached the workers 3–3.5 s late in some loads (a trace
    // of one: posted at 1.40 s, handled at 4.63 s, the workers idle in
    // between).
    const pool = window.schedplayPrestart || [];
    const got = pool.map((p) => new Promise((resolve) => { p.got = resolve; }));
    // held: the workers wait for the page's Go program to start them
    // (wasm/client.go, startPrestartedWorkers).
    for (const p of pool) p.worker.postMessage({ t: "init", module, held: true });
    await Promise.race([Promise.all(got), new Promise((resolve) => setTimeout(resolve, 500))]);
    loadTimes.workersGot = performance.now();
    return await WebAssembly.instantiate(module, go.importObject);
  }

  // prestartWorkers starts the engine workers the first link needs before
  // the module is even fetched: a worker's thread and scripts load while
  // the wasm downloads and compiles (once the main thread is busy starting
  // the Go program, a new worker waits for it), and instantiate() posts
  // them the module as soon as it is compiled, so that their Go programs
  // start while the page's own does, on the other core.
  // The Go side adopts them (wasm/client.go, window.schedplayPrestart) and
  // replays what they said before it listened. The empty link is the A/B
  // story: two arms, as are ab=, arms= and exp= links.
  function prestartWorkers() {
    const h = location.hash.replace(/^#/, "");
    const n = h === "" || /(^|&)(ab=1|ab=true|arms=[2-9]|exp=)/.test(h) ? 2 : 1;
    const pool = (window.schedplayPrestart = []);
    for (let i = 0; i < n; i++) {
      try {
        const w = new Worker("worker.js", { name: `schedplay engine ${"AB"[i]}` });
        const early = { messages: [], error: null };
        const entry = { worker: w, early, got: null };
        w.onmessage = (e) => {
          const m = e.data;
          if (m && m.t === "got") {
            if (entry.got) entry.got();
            return;
          }
          if (m && m.t === "boot") {
            if (loadTimes.workerScript === undefined) {
              const rel = (t) => t - performance.timeOrigin;
              loadTimes.workerScript = rel(m.script);
              loadTimes.workerInit = rel(m.init);
              loadTimes.workerInstantiated = rel(m.instantiated);
              loadTimes.workerRun = rel(m.run);
            }
            return;
          }
          if (loadTimes.workerReady === undefined) {
            loadTimes.workerReady = performance.now();
            if (typeof m.at === "number") loadTimes.workerReadySent = m.at - performance.timeOrigin;
          }
          early.messages.push(m);
        };
        w.onerror = (e) => { early.error = (e && e.message) || "the engine worker failed"; };
        pool.push(entry);
      } catch (e) {
        console.warn(`schedplay: could not prestart an engine worker (${e && e.message}); the page starts it later`);
        return;
      }
    }
  }

  async function compile() {
    if (WebAssembly.compileStreaming) {
      const resp = await fetch(WASM_URL);
      if (!resp.ok) throw new Error(await httpError(resp));
      try {
        return await WebAssembly.compileStreaming(counted(resp));
      } catch (e) {
        console.warn(`compileStreaming failed (${e && e.message}); retrying with an ArrayBuffer`);
      }
    }
    bootPhase = "download";
    wasmBytes = 0;
    const resp = await fetch(WASM_URL);
    if (!resp.ok) throw new Error(await httpError(resp));
    const buf = await counted(resp).arrayBuffer();
    bootPhase = "compile";
    return await WebAssembly.compile(buf);
  }

  // counted passes a response through, counting its bytes for the loading
  // message; the phase turns to "compile" once the body is in.
  function counted(resp) {
    if (!resp.body || typeof ReadableStream !== "function") return resp;
    const reader = resp.body.getReader();
    const body = new ReadableStream({
      async pull(ctl) {
        const { done, value } = await reader.read();
        if (done) {
          bootPhase = "compile";
          ctl.close();
          return;
        }
        wasmBytes += value.byteLength;
        ctl.enqueue(value);
      },
      cancel(why) {
        return reader.cancel(why);
      },
    });
    return new Response(body, { status: resp.status, statusText: resp.statusText, headers: resp.headers });
  }

  // watchLoading keeps the loading message honest: from 3 s on without a
  // first frame, it says what the page is still waiting for.
  function watchLoading() {
    if (fatalMsg || $("loading").hidden) return;
    const secs = (Date.now() - bootStart) / 1000;
    if (secs >= 3) $("loading-text").textContent = waitingFor(secs);
    setTimeout(watchLoading, 500);
  }

  function waitingFor(secs) {
    const t = `${Math.round(secs)} s`;
    switch (bootPhase) {
      case "download":
        return `Still downloading ${WASM_URL}: ${(wasmBytes / 1e6).toFixed(1)} MB so far (${t})…`;
      case "compile":
        return `Still compiling the WebAssembly module (${(wasmBytes / 1e6).toFixed(1)} MB, ${t})…`;
      case "start":
        return `The Go program is starting but has not set up the page yet (${t})…`;
    }
    const s = api("state");
    if (!s) {
      return `The simulator does not answer sim.state() (${t})${stateFailure ? ": " + stateFailure : ""}. ` +
        "The browser console has details; the panel may still work.";
    }
    if (s.building) return `Still building the run: ${s.buildingText}… (${t})`;
    if (s.crash) return `The simulator hit an internal error while ${s.crash.where}: ${s.crash.message} (see the panel)`;
    return `Waiting for the canvas to draw its first frame (${t}; WebGL2 ${hasWebGL2() ? "available" : "NOT available in this browser"})…`;
  }

  async function httpError(resp) {
    let body = "";
    try {
      body = (await resp.text()).trim().slice(0, 300);
    } catch (e) { /* no body */ }
    return `HTTP ${resp.status}${body ? " — " + body : ""}`;
  }

  function waitForSim(start) {
    if (fatalMsg) return;
    if (window.sim && typeof window.sim.state === "function") {
      sim = window.sim;
      bootPhase = "run";
      loadTimes.simFound = performance.now();
      initPanel();
      return;
    }
    if (Date.now() - start > 60000) {
      $("loading-text").textContent = "The simulator is taking long to start…";
    }
    setTimeout(() => waitForSim(start), 30);
  }

  // ---- panel construction -----------------------------------------------------

  function initPanel() {
    knobDefs = api("knobs") || [];
    for (const d of knobDefs) knobIndex[d.Name] = d;
    for (const k of api("workloadKinds") || []) kinds[k.Name] = k;
    buildSpeed();
    buildPresets(api("presets") || []);
    buildKindsHelp();
    buildLegend();
    wire();
    wireDecisions();
    sync();
    syncTimer = setInterval(sync, SYNC_MS);
    $("status").textContent = "";
    loadTimes.panel = performance.now();
  }

  function buildSpeed() {
    const s = $("speed");
    s.replaceChildren();
    for (const v of SPEEDS) {
      s.append(el("option", { value: String(v), textContent: v === 0 ? "max" : `${v}×` }));
    }
  }

  function buildPresets(list) {
    const s = $("preset");
    s.replaceChildren();
    const machines = el("optgroup", { label: "Machines" });
    const exps = el("optgroup", { label: "Experiments (guided runs)" });
    for (const p of list) {
      const value = p.Kind === "experiment" ? "exp:" + p.Name : p.Name;
      presetInfo[value] = p;
      (p.Kind === "experiment" ? exps : machines).append(el("option", { value, textContent: p.Name, title: p.Title }));
    }
    s.append(machines, exps);
  }

  // commonKeys are the keys every workload kind has (nice, cpus, …); the
  // help under a workload lists the kind's own keys first.
  function commonKeys() {
    const all = Object.values(kinds);
    if (all.length < 2) return new Set();
    return new Set((all[0].Keys || []).map((k) => k.Name)
      .filter((n) => all.every((k) => (k.Keys || []).some((key) => key.Name === n))));
  }

  function keyChip(key) {
    return el("span", { title: key.Doc, textContent: `${key.Name}=${key.Default || "…"}` });
  }

  function kindHelp(name) {
    const k = kinds[name];
    const frag = document.createDocumentFragment();
    if (!k) return frag;
    const common = commonKeys();
    const own = (k.Keys || []).filter((key) => !common.has(key.Name));
    const shared = (k.Keys || []).filter((key) => common.has(key.Name));
    frag.append(el("b", { textContent: k.Name }), " — " + k.Doc + ". Keys: ");
    own.forEach((key, i) => {
      if (i) frag.append(", ");
      frag.append(keyChip(key));
    });
    if (shared.length) {
      frag.append(own.length ? "; also " : "", ...shared.flatMap((key, i) => (i ? [", ", keyChip(key)] : [keyChip(key)])));
    }
    return frag;
  }

  function buildKindsHelp() {
    const dl = el("dl");
    for (const name of Object.keys(kinds)) {
      const k = kinds[name];
      const keys = el("dd", { class: "muted" });
      (k.Keys || []).forEach((key, i) => {
        if (i) keys.append(" · ");
        keys.append(keyChip(key));
      });
      dl.append(el("dt", { textContent: name }), el("dd", { textContent: k.Doc }), keys);
    }
    $("workload-kinds").replaceChildren(dl);
  }

  // The knob table: one row per knob, grouped by Group; a second column
  // for arm B when A/B is on.
  function buildKnobs(ab) {
    const box = $("knobs");
    for (const d of box.querySelectorAll("details.group")) openGroups[d.dataset.group] = d.open;
    box.replaceChildren();
    const known = new Set(GROUPS.map((g) => g[0]));
    const groups = GROUPS.slice();
    for (const d of knobDefs) {
      if (!known.has(d.Group)) {
        known.add(d.Group);
        groups.push([d.Group, d.Group]);
      }
    }
    for (const [group, title] of groups) {
      const defs = knobDefs.filter((d) => d.Group === group);
      if (!defs.length) continue;
      const table = el("table", { class: "knobs" + (ab ? " ab" : "") });
      const cols = el("colgroup", {}, el("col"), el("col", { class: "val" }));
      if (ab) cols.append(el("col", { class: "val" }));
      const head = el("tr", {}, el("th", { textContent: "knob" }), el("th", { textContent: ab ? "A" : "value" }));
      if (ab) head.append(el("th", { textContent: "B" }));
      const body = el("tbody");
      for (const d of defs) {
        const doc = `${d.Name} (${d.Kind}${d.Unit ? ", " + d.Unit : ""}; default ${d.Default}; allowed ${d.Allowed}): ${d.Doc}`;
        const [what, ownSource] = splitDoc(d.Doc);
        const source = ownSource || d.Source || "";
        const row = el("tr", { dataset: { knob: d.Name } },
          el("td", { class: "name", title: doc }, el("span", { class: "knob-name", textContent: d.Name }),
            el("div", { class: "knob-doc" }, what, source ? el("span", { class: "knob-source", textContent: " Source: " + source + "." }) : null)),
          el("td", { class: "val a" }, knobControl(d, "a", doc)));
        if (ab) row.append(el("td", { class: "val b" }, knobControl(d, "b", doc)));
        body.append(row);
      }
      table.append(cols, el("thead", {}, head), body);
      const details = el("details", { class: "group", dataset: { group } },
        el("summary", {}, title + " ", el("span", { class: "count", textContent: `(${defs.length})` })),
        table);
      details.open = !!openGroups[group];
      box.append(details);
    }
    knobsBuiltFor = ab;
  }

  // splitDoc splits a knob's one-line doc into what it does and where it
  // comes from (the table writes "what — source").
  function splitDoc(doc) {
    const i = (doc || "").lastIndexOf(" — ");
    if (i < 0) return [doc || "", ""];
    return [doc.slice(0, i), doc.slice(i + 3)];
  }

  function knobControl(d, arm, doc) {
    const label = `${d.Name}, arm ${arm.toUpperCase()}`;
    const props = { title: doc, dataset: { knob: d.Name, arm }, "aria-label": label };
    let c;
    if (d.Kind === "bool") {
      c = el("input", Object.assign({ type: "checkbox" }, props));
      c.addEventListener("change", () => {
        report(api("setKnob", arm, d.Name, c.checked ? "true" : "false"));
        focusCanvas();
      });
    } else if (d.Kind === "enum") {
      c = el("select", props);
      for (const v of d.Values || []) c.append(el("option", { value: v, textContent: v }));
      c.addEventListener("change", () => {
        report(api("setKnob", arm, d.Name, c.value));
        focusCanvas();
      });
    } else {
      c = el("input", Object.assign({ type: "number", step: "1" }, props));
      const m = /^(-?\d+)\.\.(-?\d+)/.exec(d.Allowed || "");
      if (m) {
        c.min = m[1];
        c.max = m[2];
      }
      c.addEventListener("change", () => {
        if (isStale(c) || c.value.trim() === "") return;
        report(api("setKnob", arm, d.Name, c.value.trim()));
        if (document.activeElement === c) focusCanvas();
      });
      c.addEventListener("keydown", (e) => {
        if (e.key === "Enter") c.dispatchEvent(new Event("change"));
        if (e.key === "Escape") {
          c.blur();
          sync();
          focusCanvas();
        }
      });
    }
    return c;
  }

  // ---- workloads editor ---------------------------------------------------------

  function workloadRow(spec) {
    const input = el("input", {
      type: "text", value: spec, spellcheck: false, autocomplete: "off",
      placeholder: "kind:key=value,… e.g. hackbench:g=4,l=1000",
      "aria-label": "Workload spec",
    });
    const help = el("div", { class: "help" });
    const remove = el("button", { type: "button", textContent: "×", title: "Remove this workload", "aria-label": "Remove this workload" });
    const row = el("div", { class: "workload" }, el("div", { class: "row" }, input, remove), help);
    const updateHelp = () => {
      const kind = input.value.split(":")[0].trim();
      help.replaceChildren();
      if (kinds[kind]) help.append(kindHelp(kind));
      else if (kind) help.textContent = `unknown kind "${kind}"; kinds: ${Object.keys(kinds).join(", ")}`;
      else help.textContent = `kinds: ${Object.keys(kinds).join(", ")}`;
    };
    input.addEventListener("input", () => {
      workloadsDirty = true;
      updateHelp();
    });
    input.addEventListener("change", () => {
      if (!isStale(input)) commitWorkloads();
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        commitWorkloads();
        focusCanvas();
      }
    });
    remove.addEventListener("click", () => {
      row.remove();
      commitWorkloads();
    });
    updateHelp();
    return row;
  }

  function shownWorkloads() {
    return [...$("workloads").querySelectorAll(".workload input")].map((i) => i.value.trim());
  }

  function renderWorkloads(list) {
    $("workloads").replaceChildren(...list.map(workloadRow));
  }

  function commitWorkloads() {
    const specs = shownWorkloads().filter((s) => s !== "");
    const res = api("setWorkloads", specs);
    if (!res) return;
    for (const i of $("workloads").querySelectorAll(".workload input")) {
      i.classList.toggle("bad", !res.ok && i.value.trim() !== "" && res.error.includes(i.value.trim()));
    }
    if (res.ok) workloadsDirty = false;
    report(res, "workload-error");
  }

  // ---- wiring -----------------------------------------------------------------

  function wire() {
    $("pause").addEventListener("click", () => {
      api("pause");
      sync();
    });
    $("step").addEventListener("click", () => {
      followStep = true;
      report(api("step"));
    });
    $("step-event").addEventListener("click", () => report(api("step", "event")));
    $("fast").addEventListener("click", () => {
      report(api("setSpeed", 0));
      if (lastState && lastState.paused) api("pause", false);
      focusCanvas();
    });
    const runTo = async () => {
      const v = Number($("run-to").value);
      if (!(v > 0 && v <= 3600)) {
        localError = `run to t = ${$("run-to").value}: a time in seconds, (0, 3600]`;
        renderError();
        return;
      }
      $("run-to-go").disabled = true;
      $("achieved").textContent = `running to t = ${v} s…`;
      try {
        await sim.runTo(v);
        localError = "";
      } catch (e) {
        localError = "run to: " + ((e && e.message) || e);
      }
      $("run-to-go").disabled = false;
      sync();
    };
    $("run-to-go").addEventListener("click", runTo);
    $("run-to").addEventListener("keydown", (e) => {
      if (e.key === "Enter") runTo();
    });
    $("overlay-on").addEventListener("change", (e) => {
      $("overlay").hidden = !e.target.checked;
      renderOverlay();
    });
    $("reset").addEventListener("click", () => report(api("reset")));
    $("speed").addEventListener("change", (e) => {
      report(api("setSpeed", Number(e.target.value)));
      focusCanvas();
    });
    $("preset").addEventListener("change", (e) => {
      const v = e.target.value;
      if (!v.startsWith("custom:")) {
        workloadsDirty = false;
        report(api("setPreset", v));
      }
      focusCanvas();
    });
    $("machine-apply").addEventListener("click", () => {
      report(api("setMachineJSON", $("machine-text").value), "machine-error");
    });
    // Workloads from files (picker or drop): rt-app JSON or imported
    // traces, added as rows with their self-contained specs and applied.
    // Several rt-app files given together are one rt-app run, merged as
    // rt-app's merge.py merges them (playground.WorkloadsFromFiles).
    const addWorkloadFiles = async (fileList) => {
      const files = [...(fileList || [])];
      if (!files.length) return;
      const named = [];
      for (const f of files) named.push([f.name, await f.text()]);
      const res = api("workloadsFromFiles", named);
      if (!res || !res.ok) {
        report(res || { ok: false, error: `${files.map((f) => f.name).join(", ")}: could not be read` }, "workload-error");
        return;
      }
      for (const spec of res.specs) $("workloads").append(workloadRow(spec));
      commitWorkloads();
    };
    $("workload-file").addEventListener("click", () => $("workload-file-input").click());
    $("workload-file-input").addEventListener("change", (e) => {
      addWorkloadFiles(e.target.files);
      e.target.value = "";
    });
    const wbox = $("workloads").parentElement;
    wbox.addEventListener("dragover", (e) => {
      if (e.dataTransfer && [...e.dataTransfer.types].includes("Files")) e.preventDefault();
    });
    wbox.addEventListener("drop", (e) => {
      if (!e.dataTransfer || !e.dataTransfer.files.length) return;
      e.preventDefault();
      addWorkloadFiles(e.dataTransfer.files);
    });
    $("workload-add").addEventListener("click", () => {
      const row = workloadRow("");
      $("workloads").append(row);
      workloadsDirty = true;
      row.querySelector("input").focus();
    });
    const seed = $("seed");
    seed.addEventListener("change", () => {
      if (isStale(seed)) return;
      const v = seed.value.trim();
      const n = Number(v);
      if (v === "" && !seed.validity.badInput) return; // emptied: the next sync restores it
      if (v === "" || !Number.isInteger(n) || n < 0 || n > Number.MAX_SAFE_INTEGER) {
        localError = `seed ${JSON.stringify(v)}: a non-negative integer`;
        renderError();
        return;
      }
      report(api("setSeed", n));
      if (document.activeElement === seed) focusCanvas();
    });
    seed.addEventListener("keydown", (e) => {
      if (e.key === "Enter") seed.dispatchEvent(new Event("change"));
    });
    $("seed-new").addEventListener("click", () => report(api("setSeed", 1 + Math.floor(Math.random() * 1e9))));
    $("ab").addEventListener("change", (e) => report(api("setAB", e.target.checked)));
    $("share").addEventListener("click", share);
    $("share-cmd").addEventListener("click", shareCommand);
    $("download").addEventListener("click", download);
    $("trace-export").addEventListener("click", exportTrace);
    $("trace-perfetto").addEventListener("click", openPerfetto);
    $("building-cancel").addEventListener("click", () => {
      api("cancelBuild");
      forceSync = true;
      sync();
      forceSync = false;
      focusCanvas();
    });
    $("crash-reset").addEventListener("click", () => {
      workloadsDirty = false;
      localError = "";
      dismissedError = "";
      showFieldError("workload-error", "");
      forceSync = true;
      report(api("resetDefault"));
      forceSync = false;
      focusCanvas();
    });
    $("crash-copy").addEventListener("click", async () => {
      const url = $("crash-link").href;
      try {
        if (!navigator.clipboard || !window.isSecureContext) throw new Error("no clipboard");
        await navigator.clipboard.writeText(url);
        $("crash-copy").textContent = "Copied";
      } catch (e) {
        window.prompt("Copy this link:", url);
      }
    });
    $("crash-dismiss").addEventListener("click", () => {
      api("dismissCrash");
      sync();
    });
    $("error-dismiss").addEventListener("click", () => {
      dismissedError = $("error-text").textContent;
      renderError();
    });

    // Panel clicks give the keyboard back to the canvas, except on fields
    // that need it for typing.
    $("panel").addEventListener("click", (e) => {
      if (e.target.closest("input[type=text], input[type=number], textarea, select, #workload-add")) return;
      focusCanvas();
    });

    // Shortcuts on the document for when the canvas does not have the
    // focus. The canvas handles the same keys itself (ebiten listens on
    // it), so keys from the canvas are left alone, as are keys for a
    // control being typed in or operated by keyboard.
    document.addEventListener("keydown", (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey || fatalMsg) return;
      if (e.target instanceof HTMLCanvasElement) return;
      if (e.target.closest && e.target.closest("input, select, textarea, button, summary, a, [contenteditable]")) return;
      if (e.key === " " || e.code === "Space") {
        e.preventDefault();
        if (!e.repeat) {
          api("pause");
          sync();
        }
      } else if (e.key === ".") {
        e.preventDefault();
        followStep = true;
        report(api("step"));
      }
    });

    // A new link (typed, pasted, or opened from history): the Go side
    // re-applies it in its own listener; sync after it.
    window.addEventListener("hashchange", () => {
      workloadsDirty = false;
      localError = "";
      dismissedError = "";
      showFieldError("workload-error", "");
      const a = document.activeElement;
      if (a && $("panel").contains(a) && a.matches("input[type=text], input[type=number], textarea")) stale.add(a);
      setTimeout(() => {
        forceSync = true;
        sync();
        forceSync = false;
      }, 0);
    });
    // Typing after the new link makes the text the user's again.
    $("panel").addEventListener("input", (e) => stale.delete(e.target));
  }

  async function share() {
    const url = location.href;
    const field = $("share-url");
    field.value = url;
    try {
      if (!navigator.clipboard || !window.isSecureContext) throw new Error("no clipboard");
      await navigator.clipboard.writeText(url);
      $("share-status").textContent = "Link copied to the clipboard.";
      field.hidden = true;
    } catch (e) {
      $("share-status").textContent = "Copy this link (the clipboard is not available here):";
      field.hidden = false;
      field.focus();
      field.select();
    }
  }

  // runCommand is the schedsim command line of each arm of this page's run,
  // up to the simulated time shown: `schedsim run --link` builds the arm as
  // the page does, so it prints the same numbers.
  function runCommand() {
    const s = lastState || {};
    const ms = Math.max(1, Math.round(Number(s.simTime || 0) * 1000));
    const arms = (s.arms && s.arms.length) || 1;
    const quoted = "'" + location.href.replace(/'/g, "'\\''") + "'";
    const lines = [];
    for (let i = 0; i < arms; i++) {
      lines.push(`schedsim run --link ${quoted} --arm ${String.fromCharCode(65 + i)} --duration ${ms}ms`);
    }
    return lines.join("\n");
  }

  async function shareCommand() {
    const cmd = runCommand();
    const field = $("share-url");
    field.value = cmd;
    try {
      if (!navigator.clipboard || !window.isSecureContext) throw new Error("no clipboard");
      await navigator.clipboard.writeText(cmd);
      $("share-status").textContent = "Command copied to the clipboard.";
      field.hidden = true;
    } catch (e) {
      $("share-status").textContent = "Copy this command (the clipboard is not available here):";
      field.hidden = false;
      field.focus();
      field.select();
    }
  }

  // ---- traces -------------------------------------------------------------

  const PERFETTO = "https://ui.perfetto.dev";

  function traceArgs() {
    const ms = Number($("trace-ms").value);
    if (!(ms > 0 && ms <= 10000)) throw new Error(`trace length ${$("trace-ms").value}: 1..10000 ms`);
    return { ms, arm: Number($("trace-arm").value) || 0 };
  }

  async function fetchTrace(format) {
    const { ms, arm } = traceArgs();
    const label = String.fromCharCode(65 + arm);
    $("share-status").textContent = `Tracing arm ${label}'s last ${ms} ms (replaying the run)…`;
    const text = await sim.exportTrace(ms, format, arm);
    return { text, ms, label };
  }

  function traceName(t, ext) {
    const s = lastState || {};
    return `schedplay-${s.preset || "run"}-${t.label}-seed${s.seed || 1}-t${Number(s.simTime || 0).toFixed(3)}s-last${t.ms}ms.${ext}`;
  }

  async function exportTrace() {
    if (!sim || fatalMsg) return;
    const format = $("trace-format").value;
    try {
      const t = await fetchTrace(format);
      const name = traceName(t, format === "json" ? "json" : "ftrace.txt");
      const url = URL.createObjectURL(new Blob([t.text], { type: format === "json" ? "application/json" : "text/plain" }));
      el("a", { href: url, download: name }).click();
      setTimeout(() => URL.revokeObjectURL(url), 30000);
      $("share-status").textContent = `Trace saved as ${name} (${fmtInt(t.text.length)} bytes).`;
    } catch (e) {
      localError = "export trace: " + ((e && e.message) || e);
      $("share-status").textContent = "";
      renderError();
    }
  }

  // openPerfetto opens the Perfetto UI in a new tab (now, within the
  // click, or a popup blocker stops it), then hands it the trace: PING
  // until it answers PONG, then postMessage the trace with the share
  // link, which Perfetto shows with it.
  async function openPerfetto() {
    if (!sim || fatalMsg) return;
    const win = window.open(PERFETTO);
    if (!win) {
      localError = "Open in Perfetto: the browser blocked the new tab; allow pop-ups for this page, or use Export trace and open the file in Perfetto";
      renderError();
      return;
    }
    let t;
    try {
      t = await fetchTrace("json");
    } catch (e) {
      localError = "Open in Perfetto: " + ((e && e.message) || e);
      $("share-status").textContent = "";
      renderError();
      return;
    }
    const buffer = new TextEncoder().encode(t.text).buffer;
    const s = lastState || {};
    const msg = { perfetto: { buffer, title: `schedplay: ${s.preset} arm ${t.label} seed ${s.seed}, last ${t.ms} ms`, fileName: traceName(t, "json"), url: location.href } };
    $("share-status").textContent = "Waiting for Perfetto to open…";
    let tries = 0;
    const timer = setInterval(() => {
      if (++tries > 200 || win.closed) {
        clearInterval(timer);
        window.removeEventListener("message", onPong);
        $("share-status").textContent = "Perfetto did not answer; use Export trace and open the file there.";
        return;
      }
      win.postMessage("PING", PERFETTO);
    }, 50);
    function onPong(e) {
      if (e.origin !== PERFETTO || e.data !== "PONG") return;
      clearInterval(timer);
      window.removeEventListener("message", onPong);
      win.postMessage(msg, PERFETTO);
      $("share-status").textContent = `Trace sent to Perfetto (${fmtInt(t.text.length)} bytes) with this page's link.`;
    }
    window.addEventListener("message", onPong);
  }

  async function download() {
    if (!sim || fatalMsg) return;
    $("share-status").textContent = "Collecting results…";
    try {
      const json = await sim.results();
      const url = URL.createObjectURL(new Blob([json], { type: "application/json" }));
      const a = el("a", { href: url, download: "schedplay-results.json" });
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 30000);
      $("share-status").textContent = "Results saved as schedplay-results.json.";
    } catch (e) {
      const msg = String((e && e.message) || e);
      if (msg.includes(EXITED)) fatal("the Go program has exited" + goReason());
      else {
        localError = "results: " + msg;
        renderError();
      }
      $("share-status").textContent = "";
    }
  }

  // ---- sync from sim.state() ---------------------------------------------------

  function setIfIdle(control, value) {
    if (!forceSync && document.activeElement === control) return;
    if (control.type === "checkbox") {
      if (control.checked !== value) control.checked = value;
    } else if (control.value !== value) {
      control.value = value;
    }
  }

  function syncSelect(select, value, customLabel) {
    if (!forceSync && document.activeElement === select) return;
    let opt = [...select.options].find((o) => o.value === value);
    let custom = select.querySelector("option[data-custom]");
    if (!opt) {
      if (!custom) {
        custom = el("option", { dataset: { custom: "1" } });
        select.prepend(custom);
      }
      custom.value = value;
      custom.textContent = customLabel;
      opt = custom;
    } else if (custom && custom !== opt) {
      custom.remove();
    }
    if (select.value !== value) select.value = value;
  }

  function machineParam(link) {
    const m = /[#&](machine|preset)=([^&]*)/.exec(link || "");
    return m ? m[0] : "";
  }

  // renderArms fills the arms table (only when a figure changed: any
  // DOM change costs the page a layout at the canvas's next frame).
  let armsRendered = "";
  function renderArms(tbody, arms) {
    const rows = arms.map((a) => el("tr", {},
      el("td", { textContent: a.label }),
      el("td", { textContent: fmtInt(a.wakeups) }),
      el("td", { textContent: fmtInt(a.p50) }),
      el("td", { textContent: fmtInt(a.p99) }),
      el("td", { textContent: fmtInt(a.p999) }),
      el("td", { textContent: (a.probesMean || 0).toFixed(1) }),
      // Era 6.12: wakees requeued in place (delayed_requeue), of the sleeps kept queued.
      el("td", a.delayed ? {
        textContent: fmtInt(a.delayed.requeued),
        title: `delayed dequeue: ${fmtInt(a.delayed.delayed)} sleeps kept queued; ${fmtInt(a.delayed.requeued)} woken there (requeued, no select_task_rq), ${fmtInt(a.delayed.dequeued)} dequeued by a pick, ${fmtInt(a.delayed.migrated)} moved while delayed`,
      } : { textContent: "—", title: "this arm's era has no delayed dequeue (DELAY_DEQUEUE is a 6.12 feature)" })));
    tbody.replaceChildren(...rows);
  }

  // dlRows are the deadline tasks' rows of every arm, as text.
  function dlRows(arms) {
    const ms = (ns) => `${+(ns / 1e6).toFixed(3)}`;
    const pct = (f) => `${(100 * f).toFixed(1)}%`;
    const rows = [];
    for (const a of arms) {
      for (const t of (a.dl && a.dl.tasks) || []) {
        rows.push([a.label, `${t.name} [${t.task}]`, `${ms(t.runtime_ns)} / ${ms(t.deadline_ns)} / ${ms(t.period_ns)} ms${t.reclaim ? ", reclaim" : ""}`,
          pct(t.reserved), pct(t.share), fmtInt(t.jobs), fmtInt(t.misses), fmtInt(t.throttles)]);
      }
    }
    return rows;
  }

  // renderDL fills the deadline tasks' table (hidden without any).
  let dlRendered = "";
  function renderDL(arms) {
    const rows = dlRows(arms);
    const key = JSON.stringify(rows);
    if (key === dlRendered) return;
    dlRendered = key;
    const table = $("dl-tasks");
    table.hidden = rows.length === 0;
    table.querySelector("tbody").replaceChildren(...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", { textContent: c })))));
  }

  function sync() {
    if (fatalMsg) return;
    const s = api("state");
    if (!s || typeof s !== "object") {
      if (s !== null) stateFailure = "sim.state() returned " + String(s);
      else if (!stateFailure) stateFailure = "it returned nothing (a recovered error; see the console)";
      return;
    }
    stateFailure = "";
    lastState = s;

    if (s.ready) $("loading").hidden = true;
    renderBuilding(s);
    renderCrash(s);
    const frame = s.frameMs ? ` · ${Number(s.frameMs).toFixed(1)} ms/frame` : "";
    setText($("status"), s.building ? "building…" : `t = ${Number(s.simTime || 0).toFixed(3)} s${frame}`);
    setText($("achieved"), s.finished ? "finished"
      : s.paused ? "paused" : `achieved ${fmtSpeed(s.achievedSpeed)}×`);
    setText($("pause"), s.paused ? "Resume" : "Pause");

    const speed = String(s.speed);
    syncSelect($("speed"), speed, s.speed === 0 ? "max" : `${s.speed}×`);

    const presetValue = s.experiment ? "exp:" + s.experiment : (presetInfo[s.preset] ? s.preset : "custom:" + s.preset);
    syncSelect($("preset"), presetValue, `custom: ${s.preset}`);
    const info = presetInfo[presetValue];
    $("preset-title").textContent = `${s.cpus} CPUs` + (info ? ` — ${info.Title}` : " — a custom machine from the link");

    setIfIdle($("seed"), String(s.seed));
    setIfIdle($("ab"), !!s.ab);

    // Knob defaults depend on the machine (its costs).
    // and on the arm's era (each era has its own defaults and knobs).
    const key = `${s.preset}|${s.machine}|${s.cpus}|${machineParam(s.link)}`;
    if (key !== defaultsKey) {
      defaults = {};
      defaultsKey = key;
    }
    const eraDefaults = (era) => (defaults[era] = defaults[era] || api("machineDefaults", era) || {});
    if (knobsBuiltFor !== !!s.ab) buildKnobs(!!s.ab);
    for (const c of $("knobs").querySelectorAll("[data-knob][data-arm]")) {
      const name = c.dataset.knob;
      const set = c.dataset.arm === "b" ? (s.knobsB || {}) : (s.knobs || {});
      const era = set.era || "5.2";
      const has = Object.prototype.hasOwnProperty.call(set, name);
      const v = has ? set[name] : (eraDefaults(era)[name] ?? "");
      setIfIdle(c, c.type === "checkbox" ? isTrue(v) : String(v));
      c.parentElement.classList.toggle("changed", has);
      // A knob the arm's era does not have is greyed out, saying why.
      const def = knobIndex[name];
      const why = def && def.Missing ? def.Missing[era] : "";
      c.disabled = !!why;
      c.parentElement.classList.toggle("absent", !!why);
      c.parentElement.title = why ? `not in era ${era}: ${why}` : "";
    }
    for (const row of $("knobs").querySelectorAll("tr[data-knob]")) {
      row.classList.toggle("changed", !!row.querySelector("td.changed"));
    }

    const editing = $("workloads").contains(document.activeElement);
    const shown = shownWorkloads();
    const want = s.workloads || [];
    const differs = shown.length !== want.length || shown.some((w, i) => w !== want[i]);
    if (differs && (forceSync || (!workloadsDirty && !editing))) {
      renderWorkloads(want);
      showFieldError("workload-error", "");
    }

    const tbody = $("arms").querySelector("tbody");
    const armsKey = JSON.stringify((s.arms || []).map((a) => [a.label, a.wakeups, a.p50, a.p99, a.p999, a.probesMean, a.delayed]));
    if (armsKey !== armsRendered) {
      armsRendered = armsKey;
      renderArms(tbody, s.arms || []);
    }
    renderDL(s.arms || []);

    renderStory(s);
    const ta = $("trace-arm");
    const n = (s.arms || []).length || 1;
    if (ta.options.length !== n) {
      ta.replaceChildren(...Array.from({ length: n }, (_, i) => el("option", { value: String(i), textContent: String.fromCharCode(65 + i) })));
    }
    renderPolicies(s);
    pollExperiment(s);
    renderDecisions();
    renderOverlay();
    renderError();
  }

  // ---- the wake policy editor, one per arm ----------------------------------------

  let policyExamples = null;  // [{File, Title, Src}]
  const policyShown = [];     // per arm: the state's {name, sum} the editor shows
  const policyDirty = [];     // per arm: edited since

  function policyBox(i) {
    const L = String.fromCharCode(65 + i);
    const sel = el("select", { id: `policy-select-${i}`, title: "none: the kernel's own select_idle_sibling; or a shipped example to start from" });
    const ta = el("textarea", { id: `policy-text-${i}`, rows: "14", spellcheck: "false", placeholder: "def select_idle_sibling(p, prev, target):\n    ..." });
    const apply = el("button", { type: "button", id: `policy-apply-${i}`, textContent: `Apply to arm ${L}`, title: "Compile the policy and rerun this arm with it (errors show below, with line and column)" });
    const err = el("div", { id: `policy-error-${i}`, class: "field-error", role: "alert", hidden: true });
    const banner = el("div", { id: `policy-banner-${i}`, class: "policy-banner", role: "alert", hidden: true });
    const name = el("span", { id: `policy-name-${i}`, class: "muted" });
    const box = el("details", { class: "policy-arm", id: `policy-arm-${i}` },
      el("summary", {}, `Policy, arm ${L}: `, name),
      el("div", { class: "row small" }, el("label", { for: sel.id, textContent: "start from" }), sel),
      ta, el("div", { class: "row" }, apply), err);
    const opts = [el("option", { value: "", textContent: "none (the kernel's)" })];
    for (const x of policyExamples || []) opts.push(el("option", { value: x.File, textContent: `Policy: ${x.Title} (example)` }));
    sel.replaceChildren(...opts);
    sel.addEventListener("change", () => {
      const x = (policyExamples || []).find((e) => e.File === sel.value);
      ta.value = x ? x.Src : "";
      ta.dataset.name = x ? x.File : "";
      policyDirty[i] = true;
      applyPolicy(i);
    });
    ta.addEventListener("input", () => { policyDirty[i] = true; showFieldError(err.id, ""); });
    apply.addEventListener("click", () => applyPolicy(i));
    return el("div", {}, banner, box);
  }

  function applyPolicy(i) {
    const ta = $(`policy-text-${i}`);
    const name = ta.dataset.name || "policy.star";
    const r = api("setPolicy", i, name, ta.value);
    if (r && !r.ok) {
      showFieldError(`policy-error-${i}`, r.error);
      return;
    }
    showFieldError(`policy-error-${i}`, "");
    policyDirty[i] = false;
    policyShown[i] = null; // take the state's text once it has it
  }

  function renderPolicies(s) {
    if (!policyExamples) policyExamples = api("policyExamples") || [];
    const pols = s.policies || [];
    const n = Math.max(1, pols.length);
    const list = $("policy-arms");
    if (list.children.length !== n) {
      list.replaceChildren(...Array.from({ length: n }, (_, i) => policyBox(i)));
      policyShown.length = 0;
      policyDirty.length = 0;
    }
    for (let i = 0; i < n; i++) {
      const p = pols[i] || { name: "", sum: "", error: "" };
      const key = `${p.name}|${p.sum}`;
      setText($(`policy-name-${i}`), p.name ? `${p.name}, in place of ${(p.hooks || []).join(", ")}` : "none");
      if (policyShown[i] !== key && !policyDirty[i]) {
        policyShown[i] = key;
        const full = p.name ? api("policy", i) : { name: "", src: "" };
        const ta = $(`policy-text-${i}`);
        ta.value = (full && full.src) || "";
        ta.dataset.name = p.name || "";
        const ex = (policyExamples || []).find((e) => e.File === p.name);
        $(`policy-select-${i}`).value = ex ? ex.File : "";
        if (p.name) $(`policy-arm-${i}`).open = true;
        if (p.error) showFieldError(`policy-error-${i}`, p.error);
      }
      // What stopped the arm: its policy's compile error or run-time error.
      const a = (s.arms || [])[i];
      const stop = p.error ? `Arm ${String.fromCharCode(65 + i)} does not run: its policy does not compile: ${p.error}`
        : a && a.policyError ? `Arm ${String.fromCharCode(65 + i)} stopped: ${a.policyError}` : "";
      const b = $(`policy-banner-${i}`);
      setText(b, stop);
      b.hidden = !stop;
    }
  }

  // setText changes an element's text only when it differs.
  function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
  }

  function renderStory(s) {
    const text = s.story || "";
    $("story").hidden = !text;
    if ($("story-text").textContent !== text) $("story-text").textContent = text;
  }

  // ---- the experiment panel -----------------------------------------------------

  let expBusy = false;
  let expLast = 0;
  const EXP_MS = 1500;

  function pollExperiment(s) {
    const box = $("experiment");
    if (!s.experiment) {
      box.hidden = true;
      window.schedplayExperiment = null;
      return;
    }
    if (expBusy || Date.now() - expLast < EXP_MS) return;
    expBusy = true;
    expLast = Date.now();
    sim.experiment().then((json) => {
      expBusy = false;
      const x = JSON.parse(json);
      window.schedplayExperiment = x;
      renderExperiment(x);
    }, (e) => {
      expBusy = false;
      $("exp-status").textContent = "experiment: " + ((e && e.message) || e);
    });
  }

  function fmtNum(v) {
    if (v == null || !isFinite(v)) return "—";
    const a = Math.abs(v);
    if (a >= 1000) return fmtInt(Math.round(v));
    if (a >= 10) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(3);
  }

  function verdict(c) {
    if (!c) return el("span", { class: "badge pending", textContent: "—" });
    if (c.pending) return el("span", { class: "badge pending", textContent: "waiting", title: c.detail });
    return el("span", { class: "badge " + (c.pass ? "pass" : "fail"), textContent: c.pass ? "PASS" : "FAIL", title: c.detail });
  }

  function renderExperiment(x) {
    const box = $("experiment");
    if (!x) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    $("exp-title").textContent = `${x.target}: ${x.title}`;
    const q = x.quick || {};
    const live = x.live || {};
    const qs = x.quickSize || {};
    const seeds = qs.seeds || 1;
    $("exp-status").textContent = (live.error ? `live arms: ${live.error}. ` : `Live arms at t = ${fmtNum(live.t || 0)} s (seed 1; they pause at ${fmtNum(x.stopAtS)} s). `) +
      (q.error ? `Reproduction failed: ${q.error}` : q.done < q.total
        ? `Reproducing at the quick size (${qs.duration_s || "full"} s × ${seeds} seeds, as make test): ${q.done} of ${q.total} runs done, now ${q.running}.`
        : `Reproduced at the quick size: ${q.total} runs in ${fmtNum(q.wallS)} s.`);
    // Arms.
    const armRows = (x.arms || []).map((a) => el("tr", {},
      el("td", {}, el("b", { textContent: a.name })),
      el("td", { textContent: a.label || "" }),
      el("td", { class: "muted", textContent: [a.machine, (a.workloads || []).join(" "), Object.entries(a.knobs || {}).map(([k, v]) => `${k}=${v}`).join(" ")].join(" · ") }),
      el("td", { textContent: a.live ? `live as ${a.live}` : "", title: a.live ? "Running on the canvas as this arm" : "Reproduced in the background only" })));
    $("exp-arms").replaceChildren(el("thead", {}, el("tr", {}, el("th", { textContent: "arm" }), el("th", { textContent: "what" }), el("th", { textContent: "setup" }), el("th", { textContent: "" }))),
      el("tbody", {}, ...armRows));
    // Rows: the seed's figure, the live arms', the reproduction's.
    const lo = (live.outcome && live.outcome.rows) || [];
    const qo = (q.outcome && q.outcome.rows) || [];
    const rows = qo.map((r, i) => {
      const l = lo[i];
      const cell = (row) => row && !row.error ? fmtNum(row.mean) + (row.stdev ? ` ±${fmtNum(row.stdev)}` : "") : "—";
      return el("tr", {}, el("td", { textContent: r.label }), el("td", { textContent: r.seed == null ? "—" : fmtNum(r.seed) }),
        el("td", { textContent: cell(l), title: l && l.error ? l.error : "" }), el("td", { textContent: cell(r), title: r.error || "" }));
    });
    $("exp-rows").replaceChildren(el("thead", {}, el("tr", {}, el("th", { textContent: "seed table" }), el("th", { textContent: "seed" }),
      el("th", { textContent: "live" }), el("th", { textContent: `quick (${seeds} seeds)` }))), el("tbody", {}, ...rows));
    renderExpChart(qo, lo);
    // Checks.
    const lc = (live.outcome && live.outcome.checks) || [];
    const qc = (q.outcome && q.outcome.checks) || [];
    $("exp-checks").replaceChildren(...qc.map((c, i) => el("li", {}, verdict(qc[i]), " ", verdict(lc[i]), " ", c.rule,
      el("div", { class: "muted", textContent: (c.pending ? (lc[i] && !lc[i].pending ? "live: " + lc[i].detail : c.detail) : c.detail) })))
    );
    const legend = el("li", { class: "muted" }, "first badge: the reproduction at the quick size (schedsim reproduce --quick); second: the live arms so far");
    $("exp-checks").prepend(legend);
    if (x.knownFail) $("exp-checks").append(el("li", { class: "muted", textContent: "Known not to reproduce: " + x.knownFail }));
    $("exp-source").textContent = x.source || "";
    $("exp-notes-list").replaceChildren(...(x.notes || []).map((n) => el("li", { textContent: n })));
  }

  // renderExpChart draws the time-to-completion rows (hackbench's time,
  // a compile's completion) as bars: the seed's figures against the
  // simulated ones, each series relative to its own largest value (the
  // checks compare ratios, not absolute times).
  function renderExpChart(rows, liveRows) {
    const box = $("exp-chart");
    const timeRows = rows.filter((r) => /:(completion_s|req_p50_s)$/.test(r.sim));
    if (!timeRows.length) {
      box.replaceChildren();
      return;
    }
    const val = (r) => (r && !r.error ? r.mean : null);
    const maxOf = (xs) => Math.max(1e-12, ...xs.filter((v) => v != null));
    const seedMax = maxOf(timeRows.map((r) => r.seed));
    const simMax = maxOf(timeRows.map(val));
    const W = 280, rowH = 14, labelW = 110, barW = W - labelW - 4;
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("width", W);
    svg.setAttribute("height", timeRows.length * rowH + 18);
    svg.setAttribute("class", "exp-chart");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "Time to completion: seed figures and simulated ones, each relative to its largest");
    const add = (tag, attrs, text) => {
      const e = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      if (text != null) e.textContent = text;
      svg.append(e);
      return e;
    };
    timeRows.forEach((r, i) => {
      const y = i * rowH;
      add("text", { x: 0, y: y + 10, class: "lbl" }, r.label.length > 20 ? r.label.slice(0, 19) + "…" : r.label).append(
        Object.assign(document.createElementNS(NS, "title"), { textContent: r.label }));
      if (r.seed != null) add("rect", { x: labelW, y: y + 1, width: barW * r.seed / seedMax, height: 5, class: "seed" });
      const v = val(r);
      if (v != null) add("rect", { x: labelW, y: y + 7, width: barW * v / simMax, height: 5, class: "sim" });
    });
    const y = timeRows.length * rowH + 12;
    add("rect", { x: labelW, y: y - 7, width: 8, height: 5, class: "seed" });
    add("text", { x: labelW + 11, y, class: "lbl" }, "seed");
    add("rect", { x: labelW + 50, y: y - 7, width: 8, height: 5, class: "sim" });
    add("text", { x: labelW + 61, y, class: "lbl" }, "simulated (each ÷ its largest)");
    box.replaceChildren(el("div", { class: "small muted", textContent: "Time to completion" }), svg);
  }

  // ---- the decision panel -------------------------------------------------------

  const STAGES = [
    ["target", "the CPU wake_affine picked (the waker's, or the wakee's previous one): taken if idle"],
    ["prev", "the wakee's previous CPU, when it shares target's last-level cache and is idle (warm cache)"],
    ["recent_used_cpu", "the CPU the wakee itself last woke a task from, when idle and in target's LLC"],
    ["select_idle_core", "scan target's LLC for a core whose SMT threads are all idle; runs only while the LLC's has_idle_cores hint is set (SIS_CORE)"],
    ["select_idle_cpu", "scan target's LLC for any idle CPU, at most nr of them: SIS_PROP sets nr from avg_idle / avg_scan_cost, SIS_BOUND clamps it, SIS_ROTATE moves the start"],
    ["select_idle_smt", "try target's own SMT siblings"],
    ["busy target", "nothing idle found: the wakee queues on target behind what runs there (the tail)"],
    ["pinned", "the wakee may run on one CPU only: no search at all"],
    ["delayed", "era 6.12 (DELAY_DEQUEUE): the wakee went to sleep with negative lag and was still queued; ttwu_runnable requeues it on its previous CPU, with no select_task_rq and no search"],
    ["rt_prev", "an RT wakee (SCHED_FIFO/RR), select_task_rq_rt: it stays on its previous CPU unless that CPU runs an RT task it cannot preempt (of its priority or higher, or pinned there)"],
    ["rt_find_lowest_rq", "then find_lowest_rq: cpupri_find takes the allowed CPUs of the lowest cpupri level below the wakee's (level 0: fair tasks or idle; 1..99: the rt_priority of the CPU's highest RT task) and picks one, preferring prev, then the waker's CPU, then the nearest domain"],
    ["dl_prev", "a deadline wakee (SCHED_DEADLINE), select_task_rq_dl: it stays on its previous CPU unless that CPU runs a deadline task it cannot preempt (one whose deadline is no later than the wakee's, or pinned there); it preempts fair and RT tasks"],
    ["dl_find_later_rq", "then find_later_rq: cpudl_find takes an allowed CPU without deadline tasks (free_cpus), else the one whose earliest deadline is the latest, if later than the wakee's; it prefers prev, then the waker's CPU, then the nearest domain; found nothing: the wakee stays on prev"],
  ];
  const STATES = [
    ["busy", "running a task, or with tasks queued"],
    ["idle", "nothing running or queued; the idle state follows (C1, C6…: deeper states take longer to leave)"],
    ["idle core", "idle, and so are all its SMT siblings: a whole core free"],
    ["polling", "idle in the polling loop: woken by a store, with no IPI and no exit latency"],
  ];

  let decArm = 0;          // the arm listed
  let decSel = 0;          // the selected decision's number (0: follow the newest)
  let followStep = false;  // select the newest decision at the next sync (after a step)
  let lastDecisions = null;

  function stateClass(st) {
    if (st === "busy") return "st-busy";
    if (st === "polling") return "st-poll";
    if (st.includes("idle core")) return "st-core";
    return "st-idle";
  }

  function buildLegend() {
    const dl = $("legend-list");
    dl.replaceChildren();
    dl.append(el("dt", { class: "legend-head", textContent: "Stages of select_idle_sibling, in order" }));
    for (const [name, doc] of STAGES) dl.append(el("dt", {}, el("code", { textContent: name })), el("dd", { textContent: doc }));
    dl.append(el("dt", { class: "legend-head", textContent: "CPU states when probed" }));
    for (const [name, doc] of STATES) {
      dl.append(el("dt", {}, el("span", { class: "chip " + stateClass(name), textContent: name })), el("dd", { textContent: doc }));
    }
    dl.append(el("dt", { class: "legend-head", textContent: "On the map" }),
      el("dd", { textContent: "After \"Step one wakeup\" (or a click on a decision here), the map draws that decision's probe path in order, from target to the CPU chosen." }),
      el("dd", { textContent: "A CPU running an RT task (SCHED_FIFO/RR) is drawn in its workload's colour inside a dark frame (\"framed: RT task\" in the map's legend); workloads whose tasks are RT are tagged [RT], and their latency charts are RT wakeup latency." }),
      el("dd", { textContent: "A CPU running a deadline task (SCHED_DEADLINE) is framed like an RT one, with a dark triangle in its top-right corner (\"framed, corner: deadline task\" in the map's legend); workloads of deadline tasks are tagged [DL] (or [DL+fair], [DL+RT]…), and the deadline tasks' reservations, CPU shares, jobs, misses and throttles are listed under the results." }));
  }

  function wireDecisions() {
    $("decisions-arm").addEventListener("change", (e) => {
      decArm = Number(e.target.value) || 0;
      decSel = 0;
      renderDecisions(true);
    });
    $("decisions-freeze").addEventListener("change", () => renderDecisions(true));
    $("decisions-list").addEventListener("click", (e) => {
      const li = e.target.closest("li[data-n]");
      if (!li) return;
      decSel = Number(li.dataset.n);
      api("highlight", decArm, decSel);
      renderDecisions(true);
    });
  }

  function us(ns) {
    if (ns < 0) return "—";
    const u = ns / 1000;
    return u >= 1000 ? `${(u / 1000).toFixed(2)} ms` : u >= 10 ? `${u.toFixed(0)} µs` : `${u.toFixed(1)} µs`;
  }

  let decRendered = "";     // the decisionsVersion() last rendered

  function renderDecisions(force) {
    if ($("decisions-freeze").checked && !force && !followStep) return;
    if (!$("decisions-box").open && !followStep) return;
    // Nothing new: leave the list (and the page's layout) alone.
    const ver = api("decisionsVersion");
    if (!force && !followStep && ver === decRendered) return;
    decRendered = ver;
    const d = (!$("decisions-freeze").checked || !lastDecisions || followStep) ? api("decisions", followStep ? -1 : decArm) : lastDecisions;
    if (!d) return;
    lastDecisions = d;
    const arms = d.arms || [];
    const sel = $("decisions-arm");
    const labels = arms.map((a, i) => `${a.label}${a.knobs && a.knobs.length ? ": " + a.knobs.join(" ") : ""}`);
    if (sel.options.length !== arms.length || [...sel.options].some((o, i) => o.textContent !== labels[i])) {
      sel.replaceChildren(...labels.map((l, i) => el("option", { value: String(i), textContent: l })));
    }
    if (followStep && d.highlight && d.highlight.n > 0) {
      decArm = d.highlight.arm;
      decSel = d.highlight.n;
      followStep = false;
    }
    if (decArm >= arms.length) decArm = 0;
    if (sel.value !== String(decArm)) sel.value = String(decArm);
    // Stages and probes may be missing (an era whose wakeup path did not
    // search): read them as empty.
    const log = ((arms[decArm] && arms[decArm].log) || []).map((x) =>
      Object.assign(x, { probes: x.probes || [], stages: x.stages || [] }));
    $("decisions-count").textContent = log.length ? `(last ${log.length}, newest first)` : "";
    const items = log.slice().reverse().map((x) => el("li", {
      value: x.n, dataset: { n: String(x.n) }, class: x.n === decSel ? "sel" : "",
      title: "Show this decision and its probe path on the map",
    }, `t=${(x.time / 1e9).toFixed(6)}s ${x.wakee} → CPU ${x.chosen} `, el("span", { class: "muted", textContent: `${x.stage}, ${x.probes.length} probed, lat ${us(x.latency)}` })));
    $("decisions-list").replaceChildren(...items);
    const shown = log.find((x) => x.n === decSel) || log[log.length - 1];
    renderDecision(shown);
  }

  // rtPlacement says where an RT wakee went by cpupri level.
  function rtPlacement(x) {
    const r = x.rt;
    const lvl = (l) => `level ${l}${l === 0 ? " (fair or idle)" : ""}`;
    const mask = !r.findLowest ? "lowest mask: not asked (prev runs nothing the wakee cannot preempt)"
      : r.lowestLevel < 0 ? "lowest mask: no allowed CPU below the wakee's priority"
      : `lowest mask: ${r.lowestCpus} CPU${r.lowestCpus === 1 ? "" : "s"} at ${lvl(r.lowestLevel)}`;
    return `prev CPU ${x.prev} at ${lvl(r.prevLevel)} · chosen CPU ${x.chosen} at ${lvl(r.chosenLevel)} · ${mask}`;
  }

  // dlPlacement says what select_task_rq_dl saw of a deadline wakee.
  function dlPlacement(x) {
    const r = x.dl;
    const on = (cpu, task, idle) => `CPU ${cpu} ${task ? "ran deadline task " + task : idle ? "was idle" : "ran no deadline task"}`;
    const how = r.later ? "moved by find_later_rq (cpudl: a CPU without deadline tasks, else the one whose earliest deadline is the latest)"
      : x.stage === "pinned" ? "pinned" : "stayed on prev";
    return `prev ${on(x.prev, r.prevDl, r.prevIdle)} · chosen ${on(x.chosen, r.chosenDl, x.chosenIdle)} · ${how}`;
  }

  function dlReservation(r) {
    const ms = (ns) => `${+(ns / 1e6).toFixed(3)} ms`;
    return r.period ? `SCHED_DEADLINE, runtime ${ms(r.runtime)} / deadline ${ms(r.deadline)} / period ${ms(r.period)}${r.reclaim ? ", reclaim" : ""}` : "SCHED_DEADLINE";
  }

  function renderDecision(x) {
    const box = $("decision");
    if (!x) {
      box.replaceChildren(el("p", { class: "muted", textContent: "No wakeup yet. Press \"Step one wakeup\"." }));
      return;
    }
    const kv = (k, v) => el("div", {}, el("b", { textContent: k + " " }), v);
    const stages = el("table", { class: "stages" },
      el("tbody", {}, ...x.stages.map((t) => el("tr", { class: t.result.includes("chosen") || t.result.startsWith("found") || t.stage === "delayed" ? "won" : "" },
        el("td", {}, el("code", { textContent: t.stage })), el("td", { textContent: t.result })))));
    const probes = el("div", { class: "probes" }, ...x.probes.map((p, i) => el("span", {
      class: "chip " + stateClass(p.state) + (p.cpu === x.chosen && i === x.probes.length - 1 ? " chosen" : ""),
      title: `probe ${i + 1}: CPU ${p.cpu}, ${p.state} (${p.stage})`,
      textContent: `${p.cpu} ${p.state}`,
    })));
    const limit = x.sisCalled ? ` · select_idle_cpu probed ${x.sisProbes}${x.sisLimit >= 0 ? " of nr=" + x.sisLimit : ""}${x.sisCut ? " (cut short)" : ""}` : "";
    box.replaceChildren(
      el("div", { class: "dec-head" }, `#${x.n} at t = ${(x.time / 1e9).toFixed(6)} s`),
      kv("waker", `${x.waker} on CPU ${x.wakerCpu}`),
      kv("wakee", x.wakee + (x.rt ? ` (SCHED_${x.rt.policy.toUpperCase()}, rt_priority ${x.rt.rtprio})` : "") + (x.dl ? ` (${dlReservation(x.dl)})` : "") + (x.sync ? " (sync wakeup)" : "")),
      (x.rt && x.rt.cpupri) || x.dl ? kv("prev / target", `${x.prev} / ${x.target}`) : kv("prev / target / recent_used_cpu", `${x.prev} / ${x.target} / ${x.recent < 0 ? "none" : x.recent}`),
      ...(x.rt && x.rt.cpupri ? [kv("cpupri", rtPlacement(x))] : []),
      ...(x.dl ? [kv("cpudl", dlPlacement(x))] : []),
      kv("wake_affine", `${x.affine}: ${x.affineWhy}`),
      el("div", { class: "dec-sub", textContent: "stages tried" }), stages,
      el("div", { class: "dec-sub", textContent: `CPUs probed, in order (${x.probes.length})` }), probes,
      kv("chosen", `CPU ${x.chosen} (${x.chosenIdle ? "idle" : "busy"}) by ${x.stage}`),
      kv("search cost", us(x.cost) + limit),
      kv("wakeup latency", x.latency < 0 ? "not run yet (step or resume to see it)" : us(x.latency)),
    );
  }

  // ---- the debug overlay -----------------------------------------------------------

  function renderOverlay() {
    const o = $("overlay");
    if (o.hidden) return;
    const p = api("perf");
    if (!p) return;
    const f = p.frame || {};
    const lines = [`frame p50 ${Number(f.p50Ms || 0).toFixed(1)} ms · p99 ${Number(f.p99Ms || 0).toFixed(1)} ms (${f.n || 0} frames)`];
    for (const w of p.workers || []) {
      lines.push(`worker ${w.arm}: t = ${Number(w.simTime).toFixed(3)} s · ${fmtSpeed(w.simRate)}× real time · ${fmtInt(Math.round(w.eventsPerSec))} events/s`);
    }
    o.textContent = lines.join("\n");
  }

  // renderBuilding shows the progress of a run being built.
  function renderBuilding(s) {
    const b = s.building;
    $("building").hidden = !b;
    if (!b) return;
    $("building-text").textContent = `Building the run: ${s.buildingText}…`;
    const bar = $("building-bar");
    if (b.phase === "tasks" && b.tasksTotal > 0) {
      bar.max = 1;
      bar.value = Math.min(1, b.tasks / b.tasksTotal);
    } else {
      bar.removeAttribute("value"); // indeterminate
    }
  }

  // renderCrash shows a recovered panic: what, the link that reproduces
  // it, and the way back.
  function renderCrash(s) {
    const c = s.crash;
    $("crash").hidden = !c;
    if (!c) {
      $("crash-copy").textContent = "Copy link";
      return;
    }
    $("crash-where").textContent = c.where;
    $("crash-message").textContent = c.message;
    $("crash-halted").hidden = !s.halted;
    const url = location.origin + location.pathname + location.search + "#" + c.link;
    const a = $("crash-link");
    if (a.href !== url) {
      a.href = url;
      a.textContent = "#" + (c.link.length > 160 ? c.link.slice(0, 160) + "…" : c.link);
      a.title = "#" + c.link;
    }
  }

  window.addEventListener("error", (e) => {
    if (String(e.message || "").includes(EXITED)) fatal("the Go program has exited" + goReason());
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", boot);
  } else {
    boot();
  }
})();
