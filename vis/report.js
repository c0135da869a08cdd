// ipu-mlir's interactive report (vis/interactive.py inlines this file and the profile's data).
// Plain DOM and SVG, no library: see docs/pictures.md for the measurement behind that choice.
// Deep links select on load: #tile=5, #step=3, #sort=flops (what the browser test drives).
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const CLOCK = D.target.clock_hz;
const PHASES = { exchange: "#f5a623", compute: "#7ed321", sync: "#d0021b" }; // a superstep's phases, in order
const KINDS = { weight: "#9b59b6", variable: "#e056a0", host: "#4e9af1", exchange: "#f5a623", compute: "#7ed321" };
const SVG = "http://www.w3.org/2000/svg";
const tip = document.getElementById("tooltip");
const state = { tile: null, step: null, sort: "cycles", descending: true, zoom: 1, offset: 0 };

const us = (cycles) => `${(cycles / CLOCK * 1e6).toFixed(3)} us`;
const int = (n) => Math.round(n).toLocaleString("en-US");
function bytes(n) {
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(2)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(2)} KiB`;
  return `${int(n)} B`;
}
function flops(n) {
  const units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  for (const [size, prefix] of units) if (n >= size) return `${(n / size).toFixed(2)} ${prefix}FLOP`;
  return `${int(n)} FLOP`;
}
function el(tag, attributes = {}, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}
function hover(node, text) {
  node.addEventListener("mousemove", (event) => {
    tip.textContent = typeof text === "function" ? text(event) : text;
    tip.style.display = "block";
    tip.style.left = `${event.pageX + 12}px`;
    tip.style.top = `${event.pageY + 12}px`;
  });
  node.addEventListener("mouseleave", () => (tip.style.display = "none"));
}
function section(id, title, ...children) {
  document.getElementById("nav").append(el("a", { href: `#${id}` }, title));
  return el("section", { id }, el("h2", {}, title), ...children);
}
function table(headers, rows, id) {
  const head = el("tr", {}, ...headers.map(([key, label]) => el("th", { "data-key": key }, label)));
  return el("table", { id }, el("thead", {}, head), el("tbody", {}, ...rows));
}

// --- Summary: the ipu-run summary in units ---------------------------------------------
function summary(s, t) {
  const pairs = [
    ["target", `${s.target} (${t.num_tiles} tiles, ${bytes(t.tile_memory_bytes)} each, ${(t.clock_hz / 1e9).toFixed(3)} GHz)`],
    ["estimated time", `${us(s.cycles)} (${int(s.cycles)} cycles)`],
    ["compute / exchange / sync", `${us(s.compute_cycles)} / ${us(s.exchange_cycles)} / ${us(s.sync_cycles)}`],
    ["supersteps", int(s.supersteps)],
    ["host streams", `${bytes(s.host_bytes)} in ${(s.host_seconds * 1e6).toFixed(3)} us`],
    ["weights at load", `${bytes(s.load_bytes || 0)} in ${((s.load_seconds || 0) * 1e6).toFixed(3)} us, once`],
    ["exchanged", bytes(s.exchange_bytes)],
    ["memory per tile", `peak ${bytes(s.peak_memory_per_tile)}, mean ${bytes(s.mean_memory_per_tile)}`],
    ["vertices / edges", `${int(s.vertices)} / ${int(s.edges)}`],
    ["FLOPs", flops(D.layers.reduce((sum, row) => sum + row.flops, 0))],
  ];
  return table([["", "figure"], ["", "value"]], pairs.map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", { class: "n" }, v))), "summary");
}

// --- Operations per layer, sortable ------------------------------------------------------
const LAYER_COLUMNS = [
  ["layer", "layer"], ["ops", "ATen ops"], ["steps", "supersteps"], ["cycles", "time"], ["compute", "compute"],
  ["exchange", "exchange"], ["flops", "FLOPs"], ["memory", "memory (all tiles)"], ["bytes", "exchanged"],
];
function layerRows() {
  const rows = [...D.layers].sort((a, b) => {
    const [x, y] = [a[state.sort], b[state.sort]];
    const order = typeof x === "string" || Array.isArray(x) ? String(x).localeCompare(String(y)) : x - y;
    return state.descending ? -order : order;
  });
  return rows.map((r) =>
    el("tr", {}, el("td", {}, r.layer), el("td", {}, r.ops.join(", ")), el("td", { class: "n" }, int(r.steps)),
      el("td", { class: "n" }, us(r.cycles)), el("td", { class: "n" }, us(r.compute)), el("td", { class: "n" }, us(r.exchange)),
      el("td", { class: "n" }, flops(r.flops)), el("td", { class: "n" }, bytes(r.memory)), el("td", { class: "n" }, bytes(r.bytes))));
}
function layers() {
  const view = table(LAYER_COLUMNS, layerRows(), "layers");
  view.querySelectorAll("th").forEach((th) => th.addEventListener("click", () => sortLayers(th.dataset.key)));
  return view;
}
function sortLayers(key) {
  state.descending = state.sort === key ? !state.descending : true;
  state.sort = key;
  const body = document.querySelector("#layers tbody");
  body.replaceChildren(...layerRows());
  document.querySelectorAll("#layers th").forEach((th) => th.classList.toggle("sorted", th.dataset.key === key));
}

// --- Program tree: supersteps grouped by layer and repeat ----------------------------------
function tree() {
  const root = el("div", { id: "tree" });
  let group = null;
  D.steps.forEach((step, index) => {
    const key = `${step.layer}|${step.repeat}`;
    if (!group || group.key !== key) {
      group = { key, node: el("details", {}), summary: el("summary"), cycles: 0, count: 0 };
      group.node.append(group.summary);
      root.append(group.node);
    }
    const cycles = (step.compute + step.exchange + step.sync) * step.repeat;
    group.cycles += cycles;
    group.count += 1;
    const count = `${group.count} superstep${group.count > 1 ? "s" : ""}`;
    group.summary.textContent = `${step.layer}${step.repeat > 1 ? `  (Repeat x${step.repeat})` : ""}: ${count}, ${us(group.cycles)}`;
    group.node.append(el("div", { class: "step", onclick: () => selectStep(index) },
      `#${index} ${step.kind}: ${us(cycles)}; ${step.ops.slice(0, 4).join("; ")}${step.ops.length > 4 ? "; ..." : ""}`));
  });
  return root;
}

// --- Execution trace: supersteps along the estimated time; wheel zooms, click selects -----
// On a multi-IPU target a lane per IPU below the phases: a superstep's compute drawn on the
// lanes of the IPUs whose tiles work in it, a pipeline's fill, steady state and flush shaded.
const PIPELINE = { fill: "#4e9af1", steady: "#7ed321", flush: "#f5a623" };
function trace() {
  const ipus = D.num_ipus > 1 ? [...new Set(D.steps.flatMap((s) => s.ipus))].sort((a, b) => a - b) : [];
  const width = 1100, lane = 26, height = (3 + ipus.length) * lane + 30 + (D.pipeline ? 16 : 0), left = 70;
  const svg = el("svg:svg", { id: "trace-svg", viewBox: `0 0 ${width} ${height}`, width: "100%" });
  const total = D.steps.reduce((sum, s) => sum + (s.compute + s.exchange + s.sync) * s.repeat, 0) || 1;
  const bars = el("svg:g", { transform: `translate(${left},0)` });
  Object.keys(PHASES).forEach((phase, row) => svg.append(el("svg:text", { x: 2, y: row * lane + 20, class: "axis" }, phase)));
  ipus.forEach((ipu, i) => svg.append(el("svg:text", { x: 2, y: (3 + i) * lane + 20, class: "axis" }, `IPU ${ipu}`)));
  svg.append(bars);
  const starts = [0]; // each superstep's first cycle, and the end
  D.steps.forEach((s) => starts.push(starts[starts.length - 1] + (s.compute + s.exchange + s.sync) * s.repeat));
  const draw = () => {
    bars.replaceChildren();
    const scale = ((width - left) * state.zoom) / total;
    for (const [part, span] of Object.entries(D.pipeline || {})) { // behind the IPU lanes
      if (!PIPELINE[part] || !span) continue;
      const x = (starts[span[0]] - state.offset) * scale, w = (starts[span[1] + 1] - starts[span[0]]) * scale;
      bars.append(el("svg:rect", { x, y: 3 * lane, width: Math.max(w, 0.5), height: ipus.length * lane, fill: PIPELINE[part], opacity: 0.15,
        class: `pipeline-${part}` }));
      bars.append(el("svg:text", { x: Math.max(x, 0) + 3, y: (3 + ipus.length) * lane + 14, class: "axis" }, part === "steady" ? "steady state" : part));
    }
    let at = 0;
    D.steps.forEach((step, index) => {
      Object.keys(PHASES).forEach((phase, row) => {
        const cycles = step[phase] * step.repeat;
        if (!cycles) return;
        const x = (at - state.offset) * scale;
        at += cycles;
        if (x > width || x + cycles * scale < 0) return;
        const bar = el("svg:rect", { x, y: row * lane + 4, width: Math.max(cycles * scale, 0.5), height: lane - 6, fill: PHASES[phase],
          class: index === state.step ? "chosen" : "", onclick: () => selectStep(index) });
        hover(bar, `#${index} ${step.layer} ${step.op} ${phase}: ${us(cycles)}${step.repeat > 1 ? ` (x${step.repeat})` : ""}`);
        bars.append(bar);
        if (phase === "compute") step.ipus.forEach((ipu) => { // the same span on each working IPU's lane
          const onIpu = el("svg:rect", { x, y: (3 + ipus.indexOf(ipu)) * lane + 4, width: Math.max(cycles * scale, 0.5), height: lane - 6,
            fill: PHASES.compute, class: `ipu-lane${index === state.step ? " chosen" : ""}`, "data-ipu": ipu, "data-step": index,
            onclick: () => selectStep(index) });
          hover(onIpu, `#${index} IPU ${ipu} ${step.layer} ${step.op}: ${us(cycles)}`);
          bars.append(onIpu);
        });
        const shown = Math.min(x + cycles * scale, width - left) - Math.max(x, 0);
        if (phase === "compute" && shown > 7 * step.layer.length) { // named where the name fits (zoom in for more)
          bars.append(el("svg:text", { x: Math.max(x, 0) + 3, y: row * lane + 19, class: "label" }, step.layer));
        }
      });
    });
    bars.append(el("svg:text", { x: 0, y: height - 6, class: "axis" },
      `${us(state.offset)} .. ${us(state.offset + total / state.zoom)} of ${us(total)} (wheel zooms, drag pans)`));
  };
  svg.addEventListener("wheel", (event) => {
    event.preventDefault();
    const box = svg.getBoundingClientRect();
    const fraction = Math.max(0, ((event.clientX - box.left) / box.width * width - left) / (width - left)); // of the lanes' width
    const at = state.offset + fraction * (total / state.zoom);
    state.zoom = Math.max(1, state.zoom * (event.deltaY < 0 ? 1.5 : 1 / 1.5));
    state.offset = Math.min(Math.max(0, at - fraction * (total / state.zoom)), total - total / state.zoom);
    draw();
  });
  let dragging = null;
  svg.addEventListener("mousedown", (event) => (dragging = { x: event.clientX, offset: state.offset }));
  window.addEventListener("mouseup", () => (dragging = null));
  svg.addEventListener("mousemove", (event) => {
    if (!dragging) return;
    const box = svg.getBoundingClientRect();
    const shift = ((dragging.x - event.clientX) / box.width) * (total / state.zoom);
    state.offset = Math.min(Math.max(0, dragging.offset + shift), total - total / state.zoom);
    draw();
  });
  state.redrawTrace = draw;
  draw();
  return el("div", {}, svg, el("div", { id: "step-detail", class: "detail" }, "click a superstep"));
}
function selectStep(index) {
  state.step = index;
  const step = D.steps[index];
  const rows = [["layer", step.layer], ["ATen op", step.op || "-"], ["kind", step.kind], ["repeat", step.repeat],
    ["compute", us(step.compute)], ["exchange", `${us(step.exchange)}, ${bytes(step.bytes)}`], ["sync", us(step.sync)],
    ["FLOPs", flops(step.flops)], ...(D.num_ipus > 1 ? [["IPUs computing", step.ipus.join(", ") || "-"]] : []), ["ops", step.ops.join("\n")]];
  document.getElementById("step-detail").replaceChildren(el("h3", {}, `superstep ${index}`),
    table([["", ""], ["", ""]], rows.map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", { class: "pre" }, v)))));
  state.redrawTrace();
}

// --- Tile map: memory per tile, colour from the least to the most used tile ---------------
function colour(fraction) { // dark blue -> yellow (viridis-like ends), fraction in 0..1
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const at = Math.min(Math.max(fraction, 0), 1) * (stops.length - 1), i = Math.min(Math.floor(at), stops.length - 2), f = at - i;
  return `rgb(${stops[i].map((c, k) => Math.round(c + f * (stops[i + 1][k] - c))).join(",")})`;
}
function tileMap() {
  const memory = D.memory, n = memory.length;
  const columns = tileColumns(n), rows = Math.ceil(n / columns), cell = Math.max(8, Math.min(24, Math.floor(640 / columns)));
  const low = Math.min(...memory), high = Math.max(...memory);
  const svg = el("svg:svg", { id: "tile-svg", width: columns * cell, height: rows * cell });
  memory.forEach((used, tile) => {
    const rect = el("svg:rect", { x: (tile % columns) * cell, y: Math.floor(tile / columns) * cell, width: cell - 1, height: cell - 1,
      fill: colour(high > low ? (used - low) / (high - low) : 1), "data-tile": tile, onclick: () => selectTile(tile) });
    hover(rect, `tile ${tile}: ${bytes(used)} (${(100 * used / D.target.tile_memory_bytes).toFixed(1)}% of ${bytes(D.target.tile_memory_bytes)})`);
    svg.append(rect);
  });
  const legend = el("div", { class: "legend" }, `${bytes(low)} `, el("span", { class: "ramp" }), ` ${bytes(high)} (colour scale from the least used tile to the most)`);
  return el("div", {}, legend, svg, el("div", { id: "tile-detail", class: "detail" }, "click a tile"));
}
function tileColumns(n) { // as vis/report.py tile_columns: the divisor nearest the square root, at least 4
  let best = n;
  for (let d = 4; d <= n; d++) if (n % d === 0 && Math.abs(d - Math.sqrt(n)) < Math.abs(best - Math.sqrt(n))) best = d;
  return best;
}
function onTileValue(runs, tile) { // per-tile values come as [value, count] runs (vis/interactive.py)
  if (!runs) return 0;
  for (const [value, count] of runs) {
    if (tile < count) return value;
    tile -= count;
  }
  return 0;
}
function onTile(runs, tile) { return runs.some(([start, end]) => start <= tile && tile < end); }
function selectTile(tile) {
  state.tile = tile;
  document.querySelectorAll("#tile-svg rect").forEach((r) => r.classList.toggle("chosen", Number(r.dataset.tile) === tile));
  const rows = [];
  D.steps.forEach((step, index) => {
    const [cycles, received, sent] = ["tile_cycles", "tile_received", "tile_sent"].map((key) => onTileValue(step[key], tile));
    const vertices = step.sets.flatMap((name) => (D.sets[name]?.groups || []).filter((g) => onTile(g.tiles, tile))
      .map((g) => `${name}/${g.codelet}`));
    if (!cycles && !received && !sent && !vertices.length) return;
    rows.push(el("tr", {}, el("td", { class: "n" }, index), el("td", {}, step.layer), el("td", {}, vertices.join(", ") || "-"),
      el("td", { class: "n" }, us(cycles)), el("td", { class: "n" }, bytes(received)), el("td", { class: "n" }, bytes(sent))));
  });
  document.getElementById("tile-detail").replaceChildren(
    el("h3", {}, `tile ${tile}: ${bytes(D.memory[tile])} of ${bytes(D.target.tile_memory_bytes)}; active in ${rows.length} supersteps`),
    table([["", "superstep"], ["", "layer"], ["", "compute set / vertex (codelet)"], ["", "compute"], ["", "received"], ["", "sent"]], rows, "tile-steps"));
}

// --- Liveness by buffer, named by layer -----------------------------------------------------
function liveness() {
  const live = D.liveness;
  if (!live) return el("p", {}, "this profile has no buffer lives (an older ipu-run)");
  const values = live.bytes_per_step, width = 1100, height = 220, top = Math.max(1, ...values);
  const x = (i) => (values.length > 1 ? (i / (values.length - 1)) * (width - 20) + 10 : width / 2), y = (v) => height - 20 - (v / top) * (height - 40);
  const path = values.map((v, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join("");
  const svg = el("svg:svg", { id: "liveness-svg", viewBox: `0 0 ${width} ${height}`, width: "100%" },
    el("svg:path", { d: `${path}L${x(values.length - 1)},${height - 20}L${x(0)},${height - 20}Z`, fill: "#4e9af1", opacity: 0.35 }),
    el("svg:path", { d: path, fill: "none", stroke: "#4e9af1", "stroke-width": 2 }));
  const liveAt = (step) => D.buffers.filter((b) => b.on_busiest_tile && b.first_step <= step && step <= b.last_step)
    .sort((a, b) => b.bytes_per_tile - a.bytes_per_tile);
  const named = (b) => `${b.layer} ${b.kind} ${bytes(b.bytes_per_tile)}`;
  hover(svg, (event) => {
    const box = svg.getBoundingClientRect(), step = Math.round(((event.clientX - box.left) / box.width * width - 10) / (width - 20) * (values.length - 1));
    const index = Math.min(Math.max(step, 0), values.length - 1);
    return `superstep ${index} (${D.steps[index]?.layer}): ${bytes(values[index])} live\n${liveAt(index).slice(0, 6).map(named).join("\n")}`;
  });
  D.steps.forEach((step, i) => { // a training step's phases behind the curve
    if (step.phase) svg.prepend(el("svg:rect", { x: x(i) - (width - 20) / values.length / 2, y: 10, width: (width - 20) / values.length,
      height: height - 30, fill: TRAINING[step.phase], opacity: 0.12, class: `phase-${step.phase}` }));
  });
  if (live.peak_step >= 0) svg.append(el("svg:line", { x1: x(live.peak_step), x2: x(live.peak_step), y1: 10, y2: height - 20, stroke: "#d0021b", "stroke-dasharray": 4 }));
  const peak = liveAt(live.peak_step).slice(0, 5);
  return el("div", {}, svg, el("p", { id: "peak" },
    `peak ${bytes(live.peak_bytes)} on tile ${live.tile} at superstep ${live.peak_step} (${D.steps[live.peak_step]?.layer}); largest live: `,
    peak.map(named).join(", ")));
}

// --- A training step: its phases, the activations kept for backward, the device variables ----
const TRAINING = { forward: "#4088ff", backward: "#ff7326", update: "#5af25a", other: "#999999" };
function training() {
  const t = D.training;
  const phaseRows = Object.entries(t.phases).map(([phase, row]) => el("tr", { "data-phase": phase },
    el("td", {}, el("span", { class: "swatch", style: `background:${TRAINING[phase]}` }), phase),
    el("td", { class: "n" }, int(row.supersteps)), el("td", { class: "n" }, us(row.cycles))));
  const lives = (b) => `${b.first_step} (${D.steps[b.first_step]?.layer}) to ${b.last_step} (${D.steps[b.last_step]?.op})`;
  const keptRows = t.kept_for_backward.slice(0, 40).map((b) => el("tr", {}, el("td", {}, b.layer), el("td", {}, b.name),
    el("td", { class: "n" }, bytes(b.bytes_per_tile * b.tiles)), el("td", { class: "n" }, int(b.tiles)), el("td", {}, lives(b))));
  const variableRows = t.variables.slice(0, 40).map((b) => el("tr", {}, el("td", {}, b.variable || b.name),
    el("td", { class: "n" }, bytes(b.bytes_per_tile * b.tiles)), el("td", { class: "n" }, int(b.tiles))));
  return el("div", {},
    table([["", "phase"], ["", "supersteps"], ["", "time"]], phaseRows, "training-phases"),
    el("h3", {}, `kept for backward: ${t.kept_for_backward.length} buffers, ${bytes(t.kept_bytes)} (written in the forward pass, last read in the backward pass)`),
    table([["", "layer"], ["", "buffer"], ["", "bytes"], ["", "tiles"], ["", "live from superstep to superstep"]], keptRows, "training-kept"),
    el("h3", {}, `device variables: ${t.variables.length} buffers, ${bytes(t.variable_bytes)} (parameters, optimizer state: resident between steps)`),
    table([["", "buffer"], ["", "bytes"], ["", "tiles"]], variableRows, "training-variables"));
}

// --- Comparison of two profiles -------------------------------------------------------------
function comparison() {
  const b = D.baseline;
  const change = (now, then) => (then ? `${(100 * (now - then) / then).toFixed(1)}%` : "-");
  const figures = [["estimated time", "cycles", us], ["compute", "compute_cycles", us], ["exchange", "exchange_cycles", us],
    ["sync", "sync_cycles", us], ["exchanged", "exchange_bytes", bytes], ["peak memory per tile", "peak_memory_per_tile", bytes],
    ["vertices", "vertices", int]];
  const rows = figures.map(([label, key, unit]) => el("tr", {}, el("td", {}, label), el("td", { class: "n" }, unit(b.summary[key])),
    el("td", { class: "n" }, unit(D.summary[key])), el("td", { class: "n" }, change(D.summary[key], b.summary[key]))));
  const before = Object.fromEntries(b.layers.map((r) => [r.layer, r]));
  const names = [...new Set([...D.layers.map((r) => r.layer), ...b.layers.map((r) => r.layer)])];
  const layerRows = names.map((name) => {
    const now = D.layers.find((r) => r.layer === name)?.cycles || 0, then = before[name]?.cycles || 0;
    return el("tr", {}, el("td", {}, name), el("td", { class: "n" }, us(then)), el("td", { class: "n" }, us(now)), el("td", { class: "n" }, change(now, then)));
  });
  return el("div", {}, table([["", ""], ["", b.name], ["", D.name], ["", "change"]], rows, "compare"),
    el("h3", {}, "time per layer"), table([["", "layer"], ["", b.name], ["", D.name], ["", "change"]], layerRows, "compare-layers"));
}

const main = document.getElementById("report");
main.replaceChildren(
  section("summary-view", "Summary", summary(D.summary, D.target)),
  ...(D.baseline ? [section("compare-view", `Compared with ${D.baseline.name}`, comparison())] : []),
  section("layers-view", "Operations by layer", layers()),
  section("trace-view", "Execution trace", trace()),
  section("tree-view", "Program tree", tree()),
  section("tiles-view", "Tiles", tileMap()),
  section("liveness-view", "Liveness", liveness()),
  ...(D.training ? [section("training-view", "Training step", training())] : []),
);
for (const part of location.hash.slice(1).split("&")) {
  const [key, value] = part.split("=");
  if (key === "tile" && value < D.memory.length) selectTile(Number(value));
  if (key === "step" && value < D.steps.length) selectStep(Number(value));
  if (key === "sort" && LAYER_COLUMNS.some(([k]) => k === value)) sortLayers(value);
}
document.body.dataset.ready = performance.now().toFixed(1); // ms from navigation: the load time measured in docs/pictures.md
