// bundler ui: the fleet dashboard's page. Plain JavaScript, served as written (no build step).
// Everything the API holds (names, labels, messages) is written with textContent or as
// attribute values through the DOM, never parsed as HTML: a tenant's "<script>" stays text.
"use strict";

(() => {
  const GLYPH = {
    ErrApplied: "!", WaitApplied: "…", Offline: "○", NotReady: "×",
    Pending: "·", OutOfSync: "↻", Modified: "~", Ready: "✓",
  };
  const NONE = 255;
  const ROW_HEIGHT = 24;
  const OVERSCAN = 10;

  let session = null;
  const fleet = {
    version: -1, states: [], bundles: [], clusters: [], cells: new Uint8Array(0),
    bundleIndex: new Map(), clusterIndex: new Map(), errors: {}, loaded: false,
  };
  const filters = { workspace: "", labels: "", state: "" };
  let view = null;          // the page on screen: {kind, key, cluster, refresh()}
  let snapshotLoading = false;
  let snapshotAgain = false;
  let pending = [];

  // -- DOM helpers -------------------------------------------------------------------------

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function link(hash, text, props) { return el("a", { href: hash, ...(props || {}) }, text); }
  function bundleHash(key, cluster) {
    const [ns, name] = key.split("/");
    const base = `#/bundle/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
    return cluster ? `${base}?cluster=${encodeURIComponent(cluster)}` : base;
  }
  function clusterHash(key) {
    const [ns, name] = key.split("/");
    return `#/cluster/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
  }
  function stateTag(state) {
    return el("span", { class: `tag c-${state || "none"}` }, state || "unknown");
  }
  function kv(pairs) {
    return el("dl", { class: "kv" }, pairs.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  }
  function table(headers, rows, caption) {
    if (!rows.length) return el("p", { class: "muted" }, "none");
    return el("div", { class: "table-scroll" }, el("table", { class: "list" },
      caption ? el("caption", { class: "muted" }, caption) : null,
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c, i) =>
        el("td", { class: i === cells.length - 1 ? "msg" : "" }, c)))))));
  }
  function conditionsTable(conditions) {
    return table(["type", "status", "reason", "message"],
      conditions.map((c) => [c.type, c.status, c.reason || "", c.message || ""]));
  }
  function section(title, ...content) {
    return el("section", { class: "panel", "aria-label": title }, el("h2", {}, title), ...content);
  }

  // -- API -----------------------------------------------------------------------------------

  async function getJSON(path) {
    const answer = await fetch(path, { headers: { Accept: "application/json" } });
    const body = await answer.json();
    if (!answer.ok) throw new Error(body.error || `HTTP ${answer.status}`);
    return body;
  }

  async function act(action, kind, key, output) {
    const [namespace, name] = key.split("/");
    output.className = "result";
    output.textContent = `${action} ${kind} ${key}…`;
    try {
      const answer = await fetch("/api/actions", {
        method: "POST",
        headers: { "Content-Type": "application/json", [session.csrfHeader]: session.csrfToken },
        body: JSON.stringify({ action, kind, namespace, name }),
      });
      const body = await answer.json();
      if (!answer.ok) {
        output.className = "result refused";
        output.setAttribute("role", "alert");
        output.textContent = `Refused (${answer.status}): ${body.error}`;
        return;
      }
      output.removeAttribute("role");
      output.textContent = `Done: ${action} ${kind} ${key}`;
    } catch (error) {
      output.className = "result refused";
      output.textContent = `Failed: ${error.message}`;
    }
  }

  function actionBar(buttons) {
    const output = el("p", { class: "result", role: "status", "aria-live": "polite", id: "action-result" });
    const bar = el("div", { class: "actions" });
    if (session && session.readOnly) {
      return el("div", {}, el("p", { class: "muted" }, "Read-only: no actions."));
    }
    for (const [label, action, kind, key, id] of buttons) {
      bar.append(el("button", { type: "button", id, onclick: () => act(action, kind, key, output) }, label));
    }
    return el("div", {}, bar, output);
  }

  // -- the live stream -----------------------------------------------------------------------

  function connect() {
    const live = document.getElementById("live");
    const source = new EventSource("/api/events");
    source.onopen = () => {
      live.textContent = "live";
      live.className = "";
      loadSnapshot();
    };
    source.onerror = () => {
      live.textContent = "reconnecting…";
      live.className = "down";
    };
    source.addEventListener("fleet", (event) => onFleetChange(JSON.parse(event.data)));
    source.addEventListener("errors", (event) => showErrors(JSON.parse(event.data)));
  }

  async function loadSnapshot() {
    if (snapshotLoading) { snapshotAgain = true; return; }
    snapshotLoading = true;
    try {
      const snapshot = await getJSON("/api/fleet");
      setSnapshot(snapshot);
      const later = pending.filter((c) => !c.reset && c.version > snapshot.version);
      pending = [];
      later.forEach(applyChange);
      showErrors(snapshot.errors || {});
      fleetChanged(null);
    } catch (error) {
      showErrors({ dashboard: error.message });
    } finally {
      snapshotLoading = false;
      if (snapshotAgain) { snapshotAgain = false; loadSnapshot(); }
    }
  }

  function setSnapshot(snapshot) {
    fleet.version = snapshot.version;
    fleet.states = snapshot.states;
    fleet.bundles = snapshot.bundles;
    fleet.clusters = snapshot.clusters;
    fleet.bundleIndex = new Map(fleet.bundles.map((b, i) => [b.key, i]));
    fleet.clusterIndex = new Map(fleet.clusters.map((c, i) => [c.key, i]));
    const width = fleet.bundles.length;
    fleet.cells = new Uint8Array(width * fleet.clusters.length).fill(NONE);
    snapshot.cells.forEach((row, r) => {
      for (let b = 0; b < width; b++) {
        const ch = row.charCodeAt(b);
        if (ch >= 48 && ch <= 57) fleet.cells[r * width + b] = ch - 48;
      }
    });
    fleet.loaded = true;
  }

  function onFleetChange(change) {
    if (change.reset) { loadSnapshot(); }
    else if (snapshotLoading || !fleet.loaded) { pending.push(change); return; }
    else applyChange(change);
    fleetChanged(change.touched || null);
  }

  function applyChange(change) {
    for (const entry of change.bundles || []) {
      const i = fleet.bundleIndex.get(entry.key);
      if (i !== undefined) fleet.bundles[i] = entry;
    }
    for (const entry of change.clusters || []) {
      const i = fleet.clusterIndex.get(entry.key);
      if (i !== undefined) fleet.clusters[i] = entry;
    }
    const width = fleet.bundles.length;
    for (const [bundle, cluster, code] of change.cells || []) {
      const b = fleet.bundleIndex.get(bundle);
      const c = fleet.clusterIndex.get(cluster);
      if (b === undefined || c === undefined) continue;
      fleet.cells[c * width + b] = code < 0 ? NONE : code;
    }
    fleet.version = Math.max(fleet.version, change.version);
  }

  function fleetChanged(touched) {
    if (!view) return;
    if (view.kind === "fleet") { view.refresh(); return; }
    const keys = touched ? (view.kind === "cluster" ? touched.clusters : touched.bundles) : null;
    if (!keys || keys.includes(view.key)) scheduleRefresh();
  }

  let refreshTimer = null;
  function scheduleRefresh() {
    if (refreshTimer) return;
    refreshTimer = setTimeout(() => { refreshTimer = null; if (view) view.refresh(); }, 1000);
  }

  function showErrors(errors) {
    fleet.errors = errors;
    const box = document.getElementById("errors");
    box.replaceChildren();
    const entries = Object.entries(errors);
    if (!entries.length) return;
    box.append(el("strong", {}, "The API server refused some reads (shown as it said them):"),
      el("ul", {}, entries.map(([scope, message]) => el("li", {}, `${scope}: ${message}`))));
  }

  // -- the Fleet page ------------------------------------------------------------------------

  function fleetPage(main) {
    const workspace = el("select", { id: "filter-workspace", onchange: (e) => { filters.workspace = e.target.value; render(); } },
      el("option", { value: "" }, "all"));
    const labels = el("input", { id: "filter-labels", type: "search", value: filters.labels,
      placeholder: "env=prod,region!=eu", spellcheck: "false",
      oninput: (e) => { filters.labels = e.target.value; render(); } });
    const state = el("select", { id: "filter-state", onchange: (e) => { filters.state = e.target.value; render(); } },
      el("option", { value: "" }, "any"), Object.keys(GLYPH).map((s) => el("option", { value: s, selected: s === filters.state }, s)));
    const counts = el("ul", { class: "counts", "aria-label": "Deployments per state" });
    const offline = el("p", { class: "offline-list" });
    const summary = el("p", { class: "muted", id: "fleet-summary", "aria-live": "polite" });
    const scroller = el("div", { class: "matrix-scroll", id: "matrix-scroll" });
    const grid = el("table", { class: "matrix", role: "grid", id: "matrix", "aria-label": "Bundles by cluster" });
    scroller.append(grid);
    main.replaceChildren(
      el("h1", {}, "Fleet"),
      el("div", { class: "filters", role: "search" },
        el("label", {}, "Workspace", workspace),
        el("label", {}, "Cluster labels", labels),
        el("label", {}, "State", state)),
      counts, offline, summary, scroller,
      el("p", { class: "muted" }, "Arrow keys move in the matrix; Enter opens the cluster or the bundle on that cluster. ",
        "Legend: ", Object.entries(GLYPH).map(([s, g]) => el("span", {}, el("span", { class: `swatch c-${s}` }), `${g} ${s} `))));

    let rows = [];
    let cols = [];
    let focus = { row: 0, col: 0 };
    let frame = 0;

    function selectorMatches(clusterLabels) {
      const terms = filters.labels.split(",").map((t) => t.trim()).filter(Boolean);
      return terms.every((term) => {
        const ne = term.indexOf("!=");
        if (ne > 0) return clusterLabels[term.slice(0, ne).trim()] !== term.slice(ne + 2).trim();
        const eq = term.indexOf("=");
        if (eq > 0) return clusterLabels[term.slice(0, eq).trim()] === term.slice(eq + 1).replace(/^=/, "").trim();
        if (term.startsWith("!")) return !(term.slice(1) in clusterLabels);
        return term in clusterLabels;
      });
    }

    function compute() {
      const width = fleet.bundles.length;
      cols = [];
      fleet.bundles.forEach((b, i) => { if (!filters.workspace || b.namespace === filters.workspace) cols.push(i); });
      const wanted = filters.state ? fleet.states.indexOf(filters.state) : -1;
      const tally = new Array(fleet.states.length).fill(0);
      rows = [];
      fleet.clusters.forEach((c, r) => {
        if (filters.workspace && c.namespace !== filters.workspace) return;
        if (filters.labels && !selectorMatches(c.labels)) return;
        let has = wanted < 0;
        for (const b of cols) {
          const code = fleet.cells[r * width + b];
          if (code === NONE) continue;
          if (code === wanted) has = true;
        }
        if (!has && !(filters.state === "Offline" && c.offline)) return;
        rows.push(r);
        for (const b of cols) {
          const code = fleet.cells[r * width + b];
          if (code !== NONE) tally[code] += 1;
        }
      });
      counts.replaceChildren(...fleet.states.map((s, i) => el("li", {}, el("button", {
        type: "button", "aria-pressed": String(filters.state === s), "data-state": s,
        onclick: () => { filters.state = filters.state === s ? "" : s; render(); },
      }, el("span", { class: `swatch c-${s}` }), `${s} `, el("strong", { class: "count" }, String(tally[i]))))));
      const away = fleet.clusters.filter((c) => c.offline && (!filters.workspace || c.namespace === filters.workspace));
      offline.replaceChildren(`Offline clusters: ${away.length}`, away.length ? ": " : "",
        ...away.slice(0, 20).flatMap((c, i) => [i ? ", " : "", link(clusterHash(c.key), c.name)]),
        away.length > 20 ? ` and ${away.length - 20} more` : "");
      summary.textContent = `${rows.length} of ${fleet.clusters.length} clusters, ${cols.length} bundles`;
      focus.row = Math.min(focus.row, Math.max(0, rows.length - 1));
      focus.col = Math.min(focus.col, cols.length);
    }

    function header() {
      const oneWorkspace = new Set(cols.map((b) => fleet.bundles[b].namespace)).size <= 1;
      return el("thead", {}, el("tr", { "aria-rowindex": 1 },
        el("th", { class: "name", scope: "col" }, "Cluster"),
        cols.map((b) => {
          const bundle = fleet.bundles[b];
          return el("th", { class: "col", scope: "col", title: `${bundle.key}: ${bundle.state} ${bundle.ready}` },
            link(bundleHash(bundle.key), oneWorkspace ? bundle.name : bundle.key, { tabindex: -1 }));
        })));
    }

    function draw() {
      frame = 0;
      const width = fleet.bundles.length;
      const colsKey = cols.map((b) => fleet.bundles[b].key).join(" ");
      if (grid.tHead && grid.tHead.dataset.cols !== colsKey) grid.tHead.remove();
      let head = grid.tHead;
      if (!head) {
        head = header();
        head.dataset.cols = colsKey;
        grid.prepend(head);
      }
      const top = Math.max(0, scroller.scrollTop - head.offsetHeight);
      const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
      const count = Math.ceil(scroller.clientHeight / ROW_HEIGHT) + 2 * OVERSCAN;
      const last = Math.min(rows.length, first + count);
      const body = el("tbody", {});
      const span = cols.length + 1;
      if (first > 0) body.append(spacer(span, first));
      for (let i = first; i < last; i++) {
        const r = rows[i];
        const cluster = fleet.clusters[r];
        const marks = (cluster.offline ? " (offline)" : "") + (cluster.paused ? " (paused)" : "");
        const tr = el("tr", { "aria-rowindex": i + 2 });
        tr.append(el("th", { class: "name", scope: "row", role: "rowheader", "data-row": i, "data-col": 0,
          tabindex: focus.row === i && focus.col === 0 ? 0 : -1, title: `${cluster.key} ${cluster.state}` },
          link(clusterHash(cluster.key), cluster.name, { tabindex: -1 }), marks ? el("span", { class: "muted" }, marks) : null));
        cols.forEach((b, j) => {
          const code = fleet.cells[r * width + b];
          const state = code === NONE ? null : fleet.states[code];
          const label = `${fleet.bundles[b].key} on ${cluster.name}: ${state || "not targeted"}`;
          tr.append(el("td", {
            role: "gridcell", class: state ? `cell c-${state}` : "cell none", "data-row": i, "data-col": j + 1,
            "data-state": state || "", "data-bundle": fleet.bundles[b].key, "data-cluster": cluster.key,
            "aria-label": label, title: label,
            tabindex: focus.row === i && focus.col === j + 1 ? 0 : -1,
          }, state ? GLYPH[state] : ""));
        });
        body.append(tr);
      }
      if (last < rows.length) body.append(spacer(span, rows.length - last));
      grid.setAttribute("aria-rowcount", rows.length + 1);
      grid.setAttribute("aria-colcount", cols.length + 1);
      const hadFocus = grid.contains(document.activeElement);
      if (grid.tBodies[0]) grid.replaceChild(body, grid.tBodies[0]); else grid.append(body);
      if (hadFocus) focusCell(false);
      if (!document.body.dataset.fleetRendered && fleet.loaded) {
        document.body.dataset.fleetRendered = String(performance.now());
        performance.mark("fleet-rendered");
      }
    }

    // The rows not drawn, as one tall row; its height is set through the CSSOM, which the
    // Content-Security-Policy allows (a style attribute would be refused).
    function spacer(span, count) {
      const td = el("td", { colspan: span });
      td.style.height = `${count * ROW_HEIGHT}px`;
      return el("tr", { class: "spacer", "aria-hidden": "true" }, td);
    }

    function schedule() { if (!frame) frame = requestAnimationFrame(draw); }

    function render() {
      compute();
      draw();
    }

    function updateWorkspaces() {
      const known = [...new Set([...fleet.bundles, ...fleet.clusters].map((o) => o.namespace))].sort();
      const shown = [...workspace.options].slice(1).map((o) => o.value);
      if (known.join(" ") === shown.join(" ")) return;
      workspace.replaceChildren(el("option", { value: "" }, "all"),
        known.map((w) => el("option", { value: w, selected: w === filters.workspace }, w)));
    }

    function focusCell(scroll) {
      const target = grid.querySelector(`[data-row="${focus.row}"][data-col="${focus.col}"]`);
      if (target) { target.focus({ preventScroll: !scroll }); return; }
      if (scroll) {
        scroller.scrollTop = focus.row * ROW_HEIGHT;
        draw();
        const again = grid.querySelector(`[data-row="${focus.row}"][data-col="${focus.col}"]`);
        if (again) again.focus();
      }
    }

    grid.addEventListener("keydown", (event) => {
      const page = Math.max(1, Math.floor(scroller.clientHeight / ROW_HEIGHT) - 1);
      const moves = {
        ArrowDown: [1, 0], ArrowUp: [-1, 0], ArrowRight: [0, 1], ArrowLeft: [0, -1],
        PageDown: [page, 0], PageUp: [-page, 0],
      };
      if (event.key === "Enter") {
        const r = rows[focus.row];
        if (r === undefined) return;
        const cluster = fleet.clusters[r].key;
        location.hash = focus.col === 0 ? clusterHash(cluster) : bundleHash(fleet.bundles[cols[focus.col - 1]].key, cluster);
        event.preventDefault();
        return;
      }
      if (event.key === "Home") focus.col = 0;
      else if (event.key === "End") focus.col = cols.length;
      else if (moves[event.key]) {
        const [dr, dc] = moves[event.key];
        focus.row = Math.min(Math.max(0, focus.row + dr), Math.max(0, rows.length - 1));
        focus.col = Math.min(Math.max(0, focus.col + dc), cols.length);
      } else return;
      event.preventDefault();
      grid.querySelectorAll('[tabindex="0"]').forEach((n) => n.setAttribute("tabindex", "-1"));
      const target = grid.querySelector(`[data-row="${focus.row}"][data-col="${focus.col}"]`);
      if (target) { target.setAttribute("tabindex", "0"); target.focus(); target.scrollIntoView({ block: "nearest", inline: "nearest" }); }
      else focusCell(true);
    });
    grid.addEventListener("click", (event) => {
      const cell = event.target.closest("td.cell");
      if (!cell || cell.classList.contains("none")) return;
      const r = rows[Number(cell.dataset.row)];
      const b = cols[Number(cell.dataset.col) - 1];
      location.hash = bundleHash(fleet.bundles[b].key, fleet.clusters[r].key);
    });
    scroller.addEventListener("scroll", schedule, { passive: true });

    updateWorkspaces();
    render();
    return { kind: "fleet", refresh: () => { updateWorkspaces(); compute(); schedule(); } };
  }

  // -- the Bundle page -----------------------------------------------------------------------

  function bundlePage(main, key, selected) {
    const page = { kind: "bundle", key, refresh: load };
    main.replaceChildren(el("h1", {}, `Bundle ${key}`), el("p", { class: "muted" }, "loading…"));
    async function load() {
      let bundle;
      let deployment = null;
      try {
        bundle = await getJSON(`/api/bundles/${key.split("/").map(encodeURIComponent).join("/")}`);
        if (selected) deployment = await getJSON(`/api/bundles/${key.split("/").map(encodeURIComponent).join("/")}/clusters/${selected.split("/").map(encodeURIComponent).join("/")}`);
      } catch (error) {
        main.replaceChildren(el("h1", {}, `Bundle ${key}`), el("p", { role: "alert" }, error.message));
        return;
      }
      if (view !== page) return;
      keepFocus(main, () => main.replaceChildren(...renderBundle(bundle, deployment, selected).filter(Boolean)));
    }
    load();
    return page;
  }

  function renderBundle(b, d, selected) {
    const buttons = [[b.paused ? "Resume bundle" : "Pause bundle", b.paused ? "resume" : "pause", "Bundle", b.key, "action-pause"]];
    if (b.actions.resumeRollout) buttons.push(["Resume rollout", "resume-rollout", "Bundle", b.key, "action-resume-rollout"]);
    if (b.actions.allowDeletion) buttons.push(["Allow deletion", "allow-deletion", "Bundle", b.key, "action-allow-deletion"]);
    const chart = b.chart;
    const rollout = b.rollout;
    return [
      el("h1", {}, `Bundle ${b.key} `, stateTag(b.state)),
      actionBar(buttons),
      el("div", { class: "grid" },
        section("Chart", kv([
          ["repository", chart.repo || ""], ["chart", chart.chart || ""], ["version", chart.version || "(latest)"],
          ["resolved", chart.resolvedVersion || "—"], ["ready", b.ready], ["paused", b.paused ? "yes" : "no"],
          ["generation", String(b.generation ?? "")],
        ])),
        section("Images", table(["name", "repository", "tag", "digest", "target"],
          b.images.map((i) => [i.name, i.repository, i.tag, i.digest, i.target || ""]))),
      ),
      section("Rollout", kv([
        ["maxUnavailable", String(rollout.maxUnavailable)],
        ["maxUnavailablePartitions", String(rollout.maxUnavailablePartitions)],
      ]), table(["partition", "progress", "updated", "unavailable / maxUnavailable", "pending", "offline"],
        rollout.partitions.map((p) => [p.name,
          el("progress", { max: p.total || 1, value: p.updated, "aria-label": `${p.name}: ${p.updated} of ${p.total} updated` }),
          `${p.updated}/${p.total}`, `${p.unavailable} / ${p.maxUnavailable}`, String(p.pending), String(p.offline)]))),
      section("Conditions", conditionsTable(b.conditions)),
      b.references.length ? section("References", el("ul", {}, b.references.map((r) => el("li", {}, r)))) : null,
      section("Not ready", table(["cluster", "state", "message"],
        b.nonReady.map((n) => [link(bundleHash(b.key, n.cluster), n.cluster), stateTag(n.state), n.message || ""]))),
      section("Targets", table(["target", "criteria", "clusters", "picks"],
        b.targets.map((t) => [t.label + (t.doNotDeploy ? " (doNotDeploy)" : ""), t.criteria, String(t.count),
          t.clusters.slice(0, 30).join(", ") + (t.count > 30 ? ` and ${t.count - 30} more` : "")]))),
      d ? deploymentPanel(b, d) : null,
      section("Clusters", table(["cluster", "state", "version", "message"],
        b.clusters.map((c) => [
          link(bundleHash(b.key, c.cluster), c.name, { "aria-current": c.cluster === selected ? "true" : null }),
          stateTag(c.state), c.version ? `${c.version}${c.staged ? " (newer staged)" : ""}` : "", c.message || ""]))),
    ];
  }

  function deploymentPanel(b, d) {
    const changes = d.changes || {};
    return section(`On cluster ${d.cluster}`,
      el("p", {}, link(clusterHash(d.cluster), `Cluster ${d.cluster}`)),
      kv([["verdict", d.verdict], ["state", stateTag(d.state)], ["message", d.message || ""],
        ["version", d.version || ""], ["release", d.release && d.release.name ? `${d.release.namespace}/${d.release.name} rev ${d.release.revision ?? ""} (${d.release.chartVersion ?? ""})` : ""],
        ["deploymentID", d.deploymentID || ""]]),
      el("h3", {}, "Targets"), el("ul", {}, (d.targets || []).map((t) => el("li", {}, t))),
      el("h3", {}, "Rendered values"), d.values !== undefined ? el("pre", { tabindex: 0, "aria-label": "rendered values" }, d.values) : el("p", { class: "muted" }, "no BundleDeployment yet"),
      changes.staged ? [el("h3", {}, "Staged change (held back)"), el("pre", { tabindex: 0 }, changes.staged.join("\n") || "(no change)")] : null,
      changes.lastChange ? [el("h3", {}, "Last change (from the last Ready options)"), el("pre", { tabindex: 0 }, changes.lastChange.join("\n") || "(no change)")] : null,
      el("h3", {}, "Deployment conditions"), conditionsTable(d.deploymentConditions || []));
  }

  // -- the Cluster page ----------------------------------------------------------------------

  function clusterPage(main, key) {
    const page = { kind: "cluster", key, refresh: load };
    main.replaceChildren(el("h1", {}, `Cluster ${key}`), el("p", { class: "muted" }, "loading…"));
    async function load() {
      let c;
      try {
        c = await getJSON(`/api/clusters/${key.split("/").map(encodeURIComponent).join("/")}`);
      } catch (error) {
        main.replaceChildren(el("h1", {}, `Cluster ${key}`), el("p", { role: "alert" }, error.message));
        return;
      }
      if (view !== page) return;
      keepFocus(main, () => main.replaceChildren(...renderCluster(c).filter(Boolean)));
    }
    load();
    return page;
  }

  function renderCluster(c) {
    const agent = c.agent || {};
    const flux = agent.flux || {};
    return [
      el("h1", {}, `Cluster ${c.key} `, stateTag(c.state)),
      actionBar([[c.paused ? "Resume cluster" : "Pause cluster", c.paused ? "resume" : "pause", "Cluster", c.key, "action-pause"]]),
      el("div", { class: "grid" },
        section("Cluster", kv([["ready bundles", c.ready], ["offline", c.offline ? "yes" : "no"],
          ["paused", c.paused ? "yes" : "no"], ["agent mode", c.agentMode], ["groups", c.groups.join(", ") || "none"]])),
        section("Agent", kv([["last seen (heartbeat)", agent.lastSeen || "never"], ["version", agent.version || ""],
          ["mode", agent.mode || ""], ["Flux", flux.supported === undefined ? "not checked" : (flux.supported ? "supported" : `${flux.reason || ""}: ${flux.message || ""}`)],
          ["handover", agent.handoverPending || ""]])),
        section("Bootstrap", el("ul", { class: "phases" }, c.bootstrap.map((p) =>
          el("li", { title: p.message || "" }, `${p.type}: `, el("strong", {}, p.status || "—"), p.reason ? ` (${p.reason})` : ""))),
          c.bootstrap.some((p) => p.status) ? null : el("p", { class: "muted" }, "Not bootstrapped by bundler (no phase conditions)."))),
      section("Labels", table(["key", "value"], Object.entries(c.labels).map(([k, v]) => [k, v]))),
      section("Bundles", table(["bundle", "state", "version", "message"],
        c.bundles.map((b) => [link(bundleHash(b.bundle, c.key), b.bundle), stateTag(b.state), b.version || "", b.message || ""]))),
      section("Conditions", conditionsTable(c.conditions)),
    ];
  }

  function keepFocus(container, replace) {
    const id = document.activeElement && container.contains(document.activeElement) ? document.activeElement.id : "";
    const keptResult = document.getElementById("action-result");
    const result = keptResult ? { text: keptResult.textContent, className: keptResult.className, role: keptResult.getAttribute("role") } : null;
    replace();
    const now = document.getElementById("action-result");
    if (result && now && result.text) {
      now.textContent = result.text;
      now.className = result.className;
      if (result.role) now.setAttribute("role", result.role);
    }
    if (id) { const again = document.getElementById(id); if (again) again.focus(); }
  }

  // -- routing -------------------------------------------------------------------------------

  function route() {
    const main = document.getElementById("main");
    const hash = location.hash || "#/";
    const [path, query] = hash.slice(1).split("?");
    let parts = [];
    try {
      parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    } catch (error) {
      parts = [];  // a malformed address: the Fleet page
    }
    const params = new URLSearchParams(query || "");
    const crumb = document.getElementById("crumb");
    if (parts[0] === "bundle" && parts.length === 3) {
      crumb.textContent = `Bundle ${parts[1]}/${parts[2]}`;
      view = null;
      view = bundlePage(main, `${parts[1]}/${parts[2]}`, params.get("cluster"));
      document.title = `bundler · bundle ${parts[2]}`;
    } else if (parts[0] === "cluster" && parts.length === 3) {
      crumb.textContent = `Cluster ${parts[1]}/${parts[2]}`;
      view = null;
      view = clusterPage(main, `${parts[1]}/${parts[2]}`);
      document.title = `bundler · cluster ${parts[2]}`;
    } else {
      crumb.textContent = "";
      view = fleetPage(main);
      document.title = "bundler · fleet";
    }
  }

  async function start() {
    try {
      session = await getJSON("/api/session");
      document.getElementById("context").textContent = session.context;
    } catch (error) {
      showErrors({ dashboard: error.message });
    }
    window.addEventListener("hashchange", route);
    window.addEventListener("resize", () => { if (view && view.kind === "fleet") view.refresh(); });
    route();
    connect();
  }

  start();
})();
