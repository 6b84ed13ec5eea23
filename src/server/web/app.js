// The page of `bishops serve`: a board to play on, the value of every move,
// a remoteness chart, and the variants with their histograms. Everything it
// knows comes from the JSON API (/api/query, /api/line, /api/verify,
// /api/variants, /api/stats/NAME); the URL holds the game, so a link
// reproduces it:
//
//   /?position=START[&moves=a3-b2,e1-d2][&variant=NAME]   a game
//   /?view=variants                                       the variant list
//   /?view=variant&variant=NAME                           one variant's statistics
"use strict";

const DEFAULT_START = "5_4_a1-a3_e1-e3";
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------------
// The API
// ---------------------------------------------------------------------------

// Counts of whole-board positions pass 2^53, where numbers stop being
// exact: the reviver reads such integers from their source text as BigInt.
function bigIntegers(key, value, context) {
  if (typeof value === "number" && !Number.isSafeInteger(value) && context && /^\d+$/.test(context.source)) {
    return BigInt(context.source);
  }
  return value;
}

async function api(path, options) {
  const response = await fetch(path, options);
  let body;
  try {
    body = JSON.parse(await response.text(), bigIntegers);
  } catch (_) {
    body = { error: `${response.status} ${response.statusText}` };
  }
  if (!response.ok) throw new Error(body.error || `${response.status} ${response.statusText}`);
  return body;
}

const probes = new Map(); // "variant|position" -> probe: undo and redo need no request
const holesOf = new Map(); // variant -> the set of its board's holes, from its probes

async function probe(position, variant) {
  const key = `${variant || ""}|${position}`;
  if (!probes.has(key)) {
    const params = new URLSearchParams({ position });
    if (variant) params.set("variant", variant);
    probes.set(key, await api(`/api/query?${params}`));
  }
  return probes.get(key);
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.classList.toggle("shown", Boolean(message));
}

// ---------------------------------------------------------------------------
// Positions: "R_C_white_black", squares like "a1" (row letter, column number)
// ---------------------------------------------------------------------------

function parsePosition(text) {
  const [rows, cols, white, black] = text.split("_");
  const squares = (field) => (field ? field.split("-") : []);
  return { rows: Number(rows), cols: Number(cols), white: squares(white), black: squares(black) };
}

const squareName = (row, col) => String.fromCharCode(97 + row) + (col + 1);

// The colour class of a square: 0 for the class of a1.
const classOf = (row, col) => (row + col) % 2;

function squareRowCol(name) {
  return [name.charCodeAt(0) - 97, Number(name.slice(1)) - 1];
}

function bishopSvg(colour) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 100 100");
  svg.setAttribute("class", `bishop ${colour}`);
  const [fill, stroke] = colour === "white" ? ["#fbfaf7", "#1b1b1b"] : ["#1b1b1b", "#f2efe8"];
  svg.innerHTML = `
    <g fill="${fill}" stroke="${colour === "white" ? stroke : "#000"}" stroke-width="3.5" stroke-linejoin="round">
      <rect x="20" y="80" width="60" height="11" rx="4"/>
      <path d="M31 80 C29 69 35 63 41 60 C29 52 28 38 37 28 C42 22 46 19 50 16 C54 19 58 22 63 28
               C72 38 71 52 59 60 C65 63 71 69 69 80 Z"/>
      <circle cx="50" cy="11" r="6"/>
      <path d="M36 61 H64" fill="none"/>
    </g>
    <path d="M56 29 L46 44" fill="none" stroke="${stroke}" stroke-width="3.5" stroke-linecap="round"/>`;
  return svg;
}

// ---------------------------------------------------------------------------
// The game: history[0] is the start, history[cursor] the position shown.
// Each entry: { position, remoteness, move, value }.
// ---------------------------------------------------------------------------

const game = {
  variant: null,  // the variant asked for in the URL, or null: the position decides
  history: [],
  cursor: 0,
  probe: null,    // the probe of history[cursor]
  selected: null, // the square of the selected bishop
  hint: null,     // the move a hint shows
  animating: null, // the timer of "show optimal line"
  busy: false,
};

const here = () => game.history[game.cursor];

function gameUrl() {
  const params = new URLSearchParams({ position: game.history[0].position });
  const moves = game.history.slice(1, game.cursor + 1).map((h) => h.move);
  if (moves.length) params.set("moves", moves.join(","));
  if (game.variant) params.set("variant", game.variant);
  return `/?${params}`.replaceAll("%2C", ",");
}

async function startGame(start, moves, variant) {
  stopLine();
  game.variant = variant || null;
  game.selected = null;
  game.hint = null;
  const first = await probe(start, game.variant);
  game.history = [{ position: first.position, remoteness: first.remoteness, move: null, value: null }];
  game.cursor = 0;
  if (moves.length) {
    // The moves of a link are replayed through /api/verify: one request
    // judges them all. A link with a bad move opens at its start.
    try {
      const verdict = await api("/api/verify", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ position: first.position, moves, variant: game.variant }),
      });
      for (const m of verdict.moves) {
        game.history.push({ position: m.position, remoteness: m.remoteness, move: m.move, value: m.value });
      }
      game.cursor = game.history.length - 1;
    } catch (e) {
      showError(`${e.message}; showing the start instead`);
    }
  }
  await goTo(game.cursor);
}

async function goTo(index) {
  game.cursor = index;
  game.selected = null;
  game.hint = null;
  render(); // at once, from what history knows; the probe adds the moves
  game.probe = await probe(here().position, game.variant);
  syncUrl();
  render();
}

function syncUrl() {
  history.replaceState(null, "", gameUrl());
}

async function play(move) {
  if (game.busy) return;
  game.busy = true;
  try {
    game.history.length = game.cursor + 1; // a new move drops the redo list
    game.history.push({ position: move.position, remoteness: move.remoteness, move: move.move, value: move.value });
    await goTo(game.cursor + 1);
  } finally {
    game.busy = false;
  }
}

function clickSquare(name) {
  // Until the probe of the position shown arrives, the board has no moves to offer.
  if (!game.probe || game.probe.position !== here().position || game.animating) return;
  const destination = game.selected && movesFrom(game.selected).find((m) => m.move.split("-")[1] === name);
  if (destination) {
    play(destination).catch((e) => showError(e.message));
    return;
  }
  const position = parsePosition(game.probe.position);
  const occupied = position.white.includes(name) || position.black.includes(name);
  game.selected = occupied && game.selected !== name ? name : null;
  game.hint = null;
  render();
}

const movesFrom = (square) => (game.probe ? game.probe.moves.filter((m) => m.move.split("-")[0] === square) : []);

const VALUE_RANK = { better: 0, same: 1, worse: 2, unreachable: 3 };

function describe(move) {
  const after = move.remoteness === null ? "unreachable" : `remoteness ${move.remoteness}`;
  return `${move.move} → ${after} (${move.value})`;
}

function showHint() {
  const best = game.probe && game.probe.moves.find((m) => m.value === "better");
  if (!best) {
    $("hover").textContent = game.probe && game.probe.status === "solved"
      ? "Solved: the bishops have swapped."
      : "No move brings the goal closer.";
    return;
  }
  game.selected = best.move.split("-")[0];
  game.hint = best.move;
  $("hover").textContent = `Hint: ${describe(best)}`;
  render();
}

async function showLine() {
  if (game.animating) {
    stopLine();
    return;
  }
  const params = new URLSearchParams({ position: here().position });
  if (game.variant) params.set("variant", game.variant);
  const line = await api(`/api/line?${params}`);
  if (!line.moves.length) {
    $("hover").textContent = line.status === "solved" ? "Already solved." : "The goal cannot be reached from here.";
    return;
  }
  let step = 0;
  const next = async () => {
    if (step >= line.moves.length || !game.animating) {
      stopLine();
      return;
    }
    const r = line.remoteness - step - 1;
    game.history.length = game.cursor + 1;
    game.history.push({ position: line.positions[step], remoteness: r, move: line.moves[step], value: "better" });
    step += 1;
    await goTo(game.cursor + 1);
    if (game.animating) game.animating = setTimeout(() => next().catch(fail), 450);
  };
  game.animating = setTimeout(() => next().catch(fail), 0);
  render();
}

function stopLine() {
  if (game.animating) clearTimeout(game.animating);
  game.animating = null;
  if (game.history.length) render();
}

function fail(e) {
  stopLine();
  showError(e.message);
}

// ---------------------------------------------------------------------------
// Drawing the game
// ---------------------------------------------------------------------------

function render() {
  const entry = here();
  const position = parsePosition(entry.position);
  const probeHere = game.probe && game.probe.position === entry.position ? game.probe : null;
  renderBoard(position, probeHere);
  $("remoteness").textContent = entry.remoteness === null ? "∞" : String(entry.remoteness);
  $("played").textContent = String(game.cursor);
  const status = $("status");
  const statusName = entry.remoteness === 0 ? "solved" : entry.remoteness === null ? "unreachable" : "solvable";
  status.textContent = { solved: "solved!", unreachable: "goal unreachable", solvable: "to go" }[statusName];
  status.className = `status ${statusName}`;
  $("position-text").textContent = entry.position;
  $("position-input").value = entry.position;
  $("undo").disabled = game.cursor === 0 || Boolean(game.animating);
  $("redo").disabled = game.cursor >= game.history.length - 1 || Boolean(game.animating);
  $("hint").disabled = !probeHere || Boolean(game.animating);
  $("restart").disabled = game.cursor === 0 && game.history.length === 1;
  $("show-line").textContent = game.animating ? "Stop" : "Show optimal line";
  if (probeHere) selectVariant(probeHere.variant);
  renderMoves();
  renderChart();
}

function renderBoard(position, probeHere) {
  const board = $("board");
  const { rows, cols } = position;
  board.style.gridTemplateColumns = `repeat(${cols}, 1fr)`;
  // The board keeps its proportions and fits the screen's width and height.
  board.style.width = `min(calc(100vw - 4.6rem), calc((100vh - 14rem) * ${cols / rows}), 42rem)`;
  $("ranks").style.gridTemplateRows = `repeat(${rows}, 1fr)`;
  $("ranks").innerHTML = "";
  for (let row = rows - 1; row >= 0; row--) {
    const label = document.createElement("div");
    label.textContent = String.fromCharCode(97 + row);
    $("ranks").appendChild(label);
  }
  $("files").style.gridTemplateColumns = `repeat(${cols}, 1fr)`;
  $("files").style.width = board.style.width;
  $("files").innerHTML = "";
  for (let col = 0; col < cols; col++) {
    const label = document.createElement("div");
    label.textContent = String(col + 1);
    $("files").appendChild(label);
  }
  // The classes the variant uses: a square of another class never holds a bishop.
  const used = new Set([...position.white, ...position.black].map((s) => classOf(...squareRowCol(s))));
  // The squares cut out of the variant's board, as its probes name them.
  if (probeHere) holesOf.set(probeHere.variant, new Set(probeHere.holes || []));
  const holes = (probeHere && holesOf.get(probeHere.variant)) || holesOf.get(game.variant) || new Set();
  const last = here().move ? here().move.split("-") : [];
  const destinations = new Map(game.selected ? movesFrom(game.selected).map((m) => [m.move.split("-")[1], m]) : []);
  // Without a selection, each bishop that can move carries a dot of its best move's colour.
  const bestFrom = new Map();
  if (probeHere && !game.selected) {
    for (const m of probeHere.moves) {
      const from = m.move.split("-")[0];
      if (!bestFrom.has(from) || VALUE_RANK[m.value] < VALUE_RANK[bestFrom.get(from)]) bestFrom.set(from, m.value);
    }
  }
  board.innerHTML = "";
  board.setAttribute("aria-busy", probeHere ? "false" : "true");
  for (let row = rows - 1; row >= 0; row--) {
    for (let col = 0; col < cols; col++) {
      const name = squareName(row, col);
      const cell = document.createElement("button");
      cell.type = "button";
      cell.className = "sq";
      cell.dataset.square = name;
      if (classOf(row, col) === 0) cell.classList.add("dark");
      if (!used.has(classOf(row, col))) cell.classList.add("off");
      if (holes.has(name)) {
        // A hole holds no bishop and stops every diagonal: nothing to click.
        cell.classList.add("hole");
        cell.disabled = true;
        cell.setAttribute("aria-label", `${name}, a hole`);
        board.appendChild(cell);
        continue;
      }
      const colour = position.white.includes(name) ? "white" : position.black.includes(name) ? "black" : null;
      let label = name;
      if (colour) {
        cell.appendChild(bishopSvg(colour));
        label += `, ${colour} bishop`;
        cell.dataset.piece = colour;
      }
      if (name === game.selected) cell.classList.add("selected");
      if (last.includes(name)) cell.classList.add("last");
      if (bestFrom.has(name)) {
        cell.classList.add("movable");
        cell.style.setProperty("--hint-colour", `var(--${bestFrom.get(name)})`);
      }
      const move = destinations.get(name);
      if (move) {
        const dot = document.createElement("span");
        dot.className = `dest ${move.value}`;
        dot.textContent = move.remoteness === null ? "∞" : String(move.remoteness);
        cell.appendChild(dot);
        cell.dataset.value = move.value;
        cell.title = describe(move);
        label += `: move here, ${describe(move)}`;
        if (move.move === game.hint) cell.classList.add("hint");
      }
      cell.setAttribute("aria-label", label);
      cell.addEventListener("click", () => clickSquare(name));
      cell.addEventListener("mouseenter", () => {
        if (move) $("hover").textContent = describe(move);
        else if (colour && probeHere) {
          const n = movesFrom(name).length;
          $("hover").textContent = `${name}: ${colour} bishop, ${n} legal move${n === 1 ? "" : "s"}`;
        }
      });
      board.appendChild(cell);
    }
  }
}

function renderMoves() {
  const list = $("moves");
  list.innerHTML = "";
  game.history.slice(1).forEach((entry, i) => {
    const item = document.createElement("li");
    item.style.setProperty("--c", `var(--${entry.value || "unreachable"})`);
    const r = entry.remoteness === null ? "∞" : entry.remoteness;
    item.innerHTML = `${i + 1}. ${entry.move} <small>${r}</small>`;
    item.title = `${entry.value}: remoteness ${r} after it; click to go there`;
    if (i + 1 > game.cursor) item.classList.add("future");
    if (i + 1 === game.cursor) item.classList.add("current");
    item.addEventListener("click", () => { if (!game.animating) goTo(i + 1).catch(fail); });
    list.appendChild(item);
  });
  if (game.history.length === 1) list.innerHTML = "<li style='--c: transparent'>no moves yet</li>";
}

function svgElement(name, attributes, text) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

function renderChart() {
  const played = game.history.slice(0, game.cursor + 1).map((h) => h.remoteness);
  const start = played[0];
  const now = played[played.length - 1];
  const n = played.length - 1;
  const reachable = played.filter((r) => r !== null);
  const top = Math.max(1, ...reachable);
  const right = Math.max(4, n + (now || 0), start || 0, game.history.length - 1);
  const W = 520, H = 240, L = 34, R = 12, T = 12, B = 30;
  const x = (i) => L + (i / right) * (W - L - R);
  const y = (r) => T + (1 - r / top) * (H - T - B);
  const svg = svgElement("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", id: "chart-svg",
    "aria-label": `Remoteness after each of ${n} moves` });
  const yStep = top > 20 ? 5 : top > 10 ? 2 : 1;
  for (let r = 0; r <= top; r += yStep) {
    svg.appendChild(svgElement("line", { class: "grid", x1: L, x2: W - R, y1: y(r), y2: y(r) }));
    svg.appendChild(svgElement("text", { x: L - 6, y: y(r) + 4, "text-anchor": "end" }, String(r)));
  }
  const xStep = Math.max(1, Math.ceil(right / 12));
  for (let i = 0; i <= right; i += xStep) {
    svg.appendChild(svgElement("text", { x: x(i), y: H - B + 16, "text-anchor": "middle" }, String(i)));
  }
  svg.appendChild(svgElement("text", { x: W - R, y: H - 2, "text-anchor": "end" }, "move number"));
  svg.appendChild(svgElement("line", { class: "axis", x1: L, x2: W - R, y1: y(0), y2: y(0) }));
  svg.appendChild(svgElement("line", { class: "axis", x1: L, x2: L, y1: T, y2: y(0) }));
  if (start !== null) {
    svg.appendChild(svgElement("line", { class: "optimal", x1: x(0), y1: y(start), x2: x(start), y2: y(0) }));
  }
  if (now !== null && n > 0) {
    svg.appendChild(svgElement("line", { class: "ahead", x1: x(n), y1: y(now), x2: x(n + now), y2: y(0) }));
  }
  // The game so far, broken where a position cannot reach the goal.
  let path = "";
  played.forEach((r, i) => {
    if (r === null) return;
    path += `${path && played[i - 1] !== null ? "L" : "M"}${x(i).toFixed(1)} ${y(r).toFixed(1)} `;
  });
  if (path) svg.appendChild(svgElement("path", { class: "played", d: path }));
  played.forEach((r, i) => {
    if (r === null) return;
    const dot = svgElement("circle", { class: i === n ? "dot now" : "dot", cx: x(i), cy: y(r), r: i === n ? 4.5 : 3 });
    dot.appendChild(svgElement("title", {}, `after move ${i}: remoteness ${r}`));
    svg.appendChild(dot);
  });
  $("chart").replaceChildren(svg);
}

// ---------------------------------------------------------------------------
// The variant picker, the variant list and one variant's statistics
// ---------------------------------------------------------------------------

let variantList = [];

async function loadVariants() {
  variantList = (await api("/api/variants")).variants;
  const picker = $("variant-picker");
  picker.innerHTML = "";
  for (const v of variantList) {
    const option = document.createElement("option");
    option.value = v.name;
    option.textContent = `${v.name}${v.solved ? "" : " (not solved)"}`;
    picker.appendChild(option);
  }
}

function selectVariant(name) {
  const picker = $("variant-picker");
  if (![...picker.options].some((o) => o.value === name)) {
    const option = document.createElement("option");
    option.value = name;
    option.textContent = name;
    picker.appendChild(option);
  }
  picker.value = name;
  // It has just answered a query, so it is solved now if it was not.
  picker.selectedOptions[0].textContent = name;
}

function renderVariants() {
  const table = $("variants-table");
  table.innerHTML = `<tr><th>variant</th><th class="desc">what it is</th><th>hash sizes</th><th class="num">legal (board)</th>
    <th class="num">start remoteness</th><th>solved</th><th></th></tr>`;
  for (const v of variantList) {
    const row = document.createElement("tr");
    const play = `/?${new URLSearchParams({ position: v.start, variant: v.name })}`;
    const stats = `/?${new URLSearchParams({ view: "variant", variant: v.name })}`;
    row.innerHTML = `<td><a href="${stats}"></a></td><td class="desc"></td><td></td><td class="num"></td><td class="num"></td>
      <td></td><td><a href="${play}">play</a></td>`;
    const cells = row.querySelectorAll("td");
    cells[0].firstChild.textContent = v.name;
    cells[1].textContent = v.description;
    cells[2].textContent = v.classes.map((c) => c.hash_size.toLocaleString("en")).join(" × ");
    cells[3].textContent = v.legal_positions === null ? "–" : v.legal_positions.toLocaleString("en");
    cells[4].textContent = v.start_remoteness === null ? "–" : v.start_remoteness;
    cells[5].textContent = v.problem ? "damaged" : v.solved ? "yes" : "no";
    table.appendChild(row);
  }
}

async function renderVariant(name) {
  const summary = $("variant-summary");
  const classes = $("variant-classes");
  summary.innerHTML = `<h2></h2><p>Loading…</p>`;
  summary.querySelector("h2").textContent = `Variant ${name}`;
  classes.innerHTML = "";
  const stats = await api(`/api/stats/${encodeURIComponent(name)}`);
  selectVariant(name);
  const info = variantList.find((v) => v.name === name);
  const play = `/?${new URLSearchParams({ position: stats.start, variant: name })}`;
  const facts = [
    ["start remoteness", stats.start_remoteness],
    ["largest remoteness", stats.max_remoteness],
    ["legal positions of the whole board", stats.legal_positions === null ? "–" : stats.legal_positions.toLocaleString("en")],
    ["positions at the largest", stats.board.hardest_count.toLocaleString("en")],
  ];
  summary.innerHTML = `<h2></h2><p class="description"></p><div class="facts"></div>
    <p>Start <a class="position" href="${play}"></a></p>`;
  summary.querySelector("h2").textContent = `Variant ${name}`;
  summary.querySelector(".description").textContent = info ? info.description : "";
  summary.querySelector("a.position").textContent = `${stats.start} — play it`;
  for (const [label, value] of facts) {
    const fact = document.createElement("div");
    fact.innerHTML = `<div class="label"></div><b></b>`;
    fact.firstChild.textContent = label;
    fact.lastChild.textContent = value === null ? "–" : value;
    summary.querySelector(".facts").appendChild(fact);
  }
  if (stats.classes.length > 1) {
    const b = stats.board;
    const panel = document.createElement("div");
    panel.className = "panel histogram board";
    const heading = document.createElement("h2");
    heading.textContent = `Whole board: ${b.legal.toLocaleString("en")} legal, ` +
      `${b.unreachable.toLocaleString("en")} unreachable`;
    panel.appendChild(heading);
    panel.appendChild(histogram(b.histogram));
    if (b.hardest) {
      const hardest = document.createElement("div");
      hardest.innerHTML = `<h2></h2><div class="hardest"><a></a></div>`;
      hardest.firstChild.textContent = `Hardest (remoteness ${b.max_remoteness}): ` +
        `${b.hardest_count.toLocaleString("en")} positions, such as`;
      const link = hardest.querySelector("a");
      link.href = `/?${new URLSearchParams({ position: b.hardest, variant: name })}`;
      link.textContent = b.hardest;
      panel.appendChild(hardest);
    }
    classes.appendChild(panel);
  }
  for (const c of stats.classes) {
    const panel = document.createElement("div");
    panel.className = "panel histogram";
    const heading = document.createElement("h2");
    heading.textContent = `Class ${c.class === 0 ? "a1" : "a2"}: ${c.squares} squares, ${c.white} white + ${c.black} black;` +
      ` ${c.legal.toLocaleString("en")} legal, ${c.unreachable.toLocaleString("en")} unreachable`;
    panel.appendChild(heading);
    panel.appendChild(histogram(c.histogram));
    const hardest = document.createElement("div");
    hardest.innerHTML = `<h2>Hardest positions (remoteness ${c.max_remoteness ?? "–"})</h2><div class="hardest"></div>`;
    for (const h of c.hardest) {
      const link = document.createElement("a");
      link.href = `/?${new URLSearchParams({ position: h.position })}`;
      link.textContent = h.position;
      hardest.lastChild.appendChild(link);
    }
    panel.appendChild(hardest);
    classes.appendChild(panel);
  }
}

function histogram(counts) {
  const W = 640, H = 220, L = 8, R = 8, T = 18, B = 34;
  // Heights need no more than a Number's precision; the labels stay exact.
  const top = Math.max(1, ...counts.map(Number));
  const width = (W - L - R) / Math.max(1, counts.length);
  const svg = svgElement("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "Positions per remoteness" });
  counts.forEach((count, r) => {
    const h = (Number(count) / top) * (H - T - B);
    const bar = svgElement("rect", { x: L + r * width + 1, y: H - B - h, width: Math.max(1, width - 2), height: h, rx: 2 });
    bar.appendChild(svgElement("title", {}, `remoteness ${r}: ${count.toLocaleString("en")} positions`));
    svg.appendChild(bar);
    const every = Math.ceil(counts.length / 20);
    if (r % every === 0) {
      svg.appendChild(svgElement("text", { x: L + (r + 0.5) * width, y: H - B + 14, "text-anchor": "middle" }, String(r)));
    }
    if (counts.length <= 24 && count > 0) {
      svg.appendChild(svgElement("text", { x: L + (r + 0.5) * width, y: H - B - h - 4, "text-anchor": "middle" },
        count.toLocaleString("en")));
    }
  });
  svg.appendChild(svgElement("text", { x: W - R, y: H - 4, "text-anchor": "end" }, "remoteness"));
  return svg;
}

// ---------------------------------------------------------------------------
// Start-up and wiring
// ---------------------------------------------------------------------------

function showView(view) {
  $("play-view").hidden = view !== "play";
  $("variants-view").hidden = view !== "variants";
  $("variant-view").hidden = view !== "variant";
  $("nav-play").toggleAttribute("aria-current", view === "play");
  $("nav-variants").toggleAttribute("aria-current", view !== "play");
  if (view === "play") $("nav-play").setAttribute("aria-current", "page");
  else $("nav-variants").setAttribute("aria-current", "page");
}

async function main() {
  const params = new URLSearchParams(location.search);
  const view = params.get("view");
  try {
    await loadVariants();
  } catch (e) {
    showError(e.message);
  }
  if (view === "variants") {
    showView("variants");
    renderVariants();
    return;
  }
  if (view === "variant") {
    showView("variant");
    await renderVariant(params.get("variant") || "5x4");
    return;
  }
  showView("play");
  $("position-input").value = params.get("position") || DEFAULT_START;
  const moves = (params.get("moves") || "").split(/[,\s]+/).filter(Boolean);
  await startGame(params.get("position") || DEFAULT_START, moves, params.get("variant"));
}

function wire() {
  $("undo").addEventListener("click", () => goTo(game.cursor - 1).catch(fail));
  $("redo").addEventListener("click", () => goTo(game.cursor + 1).catch(fail));
  $("restart").addEventListener("click", () => goTo(0).catch(fail));
  $("hint").addEventListener("click", showHint);
  $("show-line").addEventListener("click", () => showLine().catch(fail));
  $("board").addEventListener("mouseleave", () => { $("hover").textContent = ""; });
  $("variant-picker").addEventListener("change", (event) => {
    const v = variantList.find((x) => x.name === event.target.value);
    if (v) location.assign(`/?${new URLSearchParams({ position: v.start, variant: v.name })}`);
  });
  $("pick").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("position-input").value.trim();
    if (text) location.assign(`/?${new URLSearchParams({ position: text })}`);
  });
  document.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" || $("play-view").hidden || game.animating) return;
    if (event.key === "ArrowLeft" && game.cursor > 0) goTo(game.cursor - 1).catch(fail);
    if (event.key === "ArrowRight" && game.cursor < game.history.length - 1) goTo(game.cursor + 1).catch(fail);
    if (event.key === "h") showHint();
    if (event.key === "Escape") { game.selected = null; render(); }
  });
}

wire();
main().catch((e) => showError(e.message));
