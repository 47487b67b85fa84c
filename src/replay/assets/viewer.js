// The referee's replay viewer: draws the games of #replay-data into
// #replay. Plain JavaScript, no libraries, nothing fetched. Every state is
// computed by the referee (src/replay/mod.rs); this only applies the steps
// it was given and draws them.
"use strict";
window.replayErrors = [];
window.addEventListener("error", function (e) {
  window.replayErrors.push(String(e.message || e));
});

(function () {
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var root = document.getElementById("replay");
  var games = data.games || [];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, tag, cls, text) {
    var e = el(tag, cls, text);
    parent.appendChild(e);
    return e;
  }

  // Cards. Even Steven: "10h"; Aces Up: "TD"; Septica: 7..14.
  var SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
  function card(text, extra) {
    var t = String(text);
    var suit = t.slice(-1).toLowerCase();
    var rank = t.slice(0, -1);
    if (rank === "T") rank = "10";
    var c = el("span", "card" + (extra ? " " + extra : ""));
    c.textContent = rank + (SUITS[suit] || suit);
    if (suit === "d" || suit === "h") c.classList.add("red");
    c.setAttribute("data-card", t);
    return c;
  }
  // Septica's cards are the protocol's values, 7 to 14.
  function scard(v, extra) {
    var c = el("span", "card" + (extra ? " " + extra : ""), v);
    if (v === 10 || v === 14) c.classList.add("points");
    c.setAttribute("data-card", v);
    return c;
  }

  // ---- the shell: picker, controls, seats --------------------------------
  var header = add(root, "header");
  add(header, "h1", null, document.title);
  var picker = null;
  if (games.length > 1) {
    picker = add(header, "select");
    picker.id = "picker";
    games.forEach(function (g, i) {
      var o = add(picker, "option", null, g.title);
      o.value = i;
    });
    picker.addEventListener("change", function () {
      show(Number(picker.value));
    });
  }
  var controls = add(root, "div", "controls");
  function button(id, label, title) {
    var b = add(controls, "button", null, label);
    b.id = id;
    b.title = title;
    return b;
  }
  var bFirst = button("first", "|\u25c0 first", "first");
  var bPrev = button("prev", "\u25c0 step", "step back (\u2190)");
  var bPlay = button("play", "\u25b6 play", "play / pause (space)");
  var bNext = button("next", "step \u25b6", "step forward (\u2192)");
  var bLast = button("last", "last \u25b6|", "last");
  var scrub = add(controls, "input");
  scrub.type = "range";
  scrub.id = "scrub";
  scrub.min = 0;
  var speed = add(controls, "select");
  speed.id = "speed";
  [0.5, 1, 2, 4, 8, 16, 32, 128].forEach(function (s) {
    var o = add(speed, "option", null, s + "\u00d7");
    o.value = s;
    if (s === 2) o.selected = true;
  });
  var stepLabel = add(controls, "span", "step");
  stepLabel.id = "step";
  var title = add(root, "h2");
  title.id = "title";
  var main = add(root, "div", "main");
  var board = add(main, "div", "board");
  board.id = "board";
  var info = add(main, "div", "info");
  info.id = "info";
  var seatsBox = add(root, "div", "seats");
  seatsBox.id = "seats";

  var current = null; // { game, viewer, step, count }
  var timer = null;

  function seatsTable(seats) {
    seatsBox.textContent = "";
    if (!seats || !seats.length) return;
    var t = add(seatsBox, "table");
    var head = add(t, "tr");
    ["seat", "result", "status", "error"].forEach(function (h) {
      add(head, "th", null, h);
    });
    seats.forEach(function (s) {
      var r = add(t, "tr");
      add(r, "td", null, s.name);
      var score = s.score;
      if (score && typeof score === "object") {
        score = Object.keys(score).map(function (key) { return key + " " + score[key]; }).join(", ");
      }
      if (score === undefined || score === null) score = s.outcome || s.verdict || (s.won === undefined ? "" : s.won ? "won" : "lost");
      add(r, "td", null, score);
      add(r, "td", "status " + (s.status || ""), (s.status || "") + (s.fate ? " (" + s.fate + ")" : ""));
      var e = s.error;
      if (e && typeof e === "object") e = e.message || JSON.stringify(e);
      var td = add(r, "td", null, e || "");
      if (s.stderr) {
        var d = add(td, "details");
        add(d, "summary", null, "stderr");
        add(d, "pre", null, s.stderr);
      }
    });
  }

  function show(i) {
    pause();
    var g = games[i];
    if (picker) picker.value = i;
    var make = VIEWERS[g.kind] || VIEWERS.frames;
    board.textContent = "";
    info.textContent = "";
    title.textContent = g.title;
    root.setAttribute("data-kind", g.kind);
    var v = make(g);
    current = { game: g, viewer: v, step: 0, count: v.count };
    scrub.max = v.count;
    seatsTable(g.seats || g.players);
    go(0);
  }

  function go(step) {
    if (!current) return;
    step = Math.max(0, Math.min(current.count, step | 0));
    current.step = step;
    scrub.value = step;
    stepLabel.textContent = current.viewer.unit + " " + step + " / " + current.count;
    current.viewer.draw(step);
  }

  function tick() {
    if (current.step >= current.count) {
      pause();
      return;
    }
    go(current.step + 1);
  }
  function play() {
    if (timer || !current) return;
    if (current.step >= current.count) go(0);
    bPlay.textContent = "|| pause";
    timer = setInterval(tick, 1000 / (2 * Number(speed.value)));
  }
  function pause() {
    if (timer) clearInterval(timer);
    timer = null;
    bPlay.textContent = "\u25b6 play";
  }
  bFirst.onclick = function () { pause(); go(0); };
  bPrev.onclick = function () { pause(); go(current.step - 1); };
  bNext.onclick = function () { pause(); go(current.step + 1); };
  bLast.onclick = function () { pause(); go(current.count); };
  bPlay.onclick = function () { if (timer) pause(); else play(); };
  scrub.addEventListener("input", function () { pause(); go(Number(scrub.value)); });
  speed.addEventListener("change", function () { if (timer) { pause(); play(); } });
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "SELECT") return;
    if (e.key === "ArrowRight") bNext.onclick();
    else if (e.key === "ArrowLeft") bPrev.onclick();
    else if (e.key === " ") { e.preventDefault(); bPlay.onclick(); }
  });

  function note(text) {
    var n = add(info, "p", "note", text);
    n.id = "note";
    return n;
  }

  // ---- Chomp --------------------------------------------------------------
  // A full cell's shade: from pale (A) to amber (Z).
  function shade(value) {
    return "hsl(42, 90%, " + (97 - value * 1.6).toFixed(1) + "%)";
  }

  // Turn times as the records keep them (docs/results.md): a word per
  // round, the players' times separated by commas, "*N" for N equal rounds.
  function expandTimes(text) {
    var out = [];
    text.split(" ").forEach(function (word) {
      if (!word) return;
      var parts = word.split("*");
      var round = parts[0].split(",").map(Number);
      for (var j = Number(parts[1] || 1); j > 0; j--) out.push(round);
    });
    return out;
  }

  function chomp(g) {
    var m = g.cols, n = g.rows, k = g.players.length;
    var TRAIL = 8;
    var wrap = add(board, "div", "chomp");
    add(wrap, "div", "plane", "projective plane: leaving an edge enters the diametrically opposite cell");
    var grid = add(wrap, "div", "grid");
    // Cells shrink to keep a large board on the screen; under 14 pixels the
    // letters give way to their shade (darker is worth more).
    var size = Math.max(5, Math.min(30, Math.floor(Math.min(1000 / m, 700 / n))));
    var small = size < 14;
    if (small) grid.classList.add("small");
    grid.style.gridTemplateColumns = "repeat(" + m + ", " + size + "px)";
    grid.style.gridAutoRows = size + "px";
    grid.style.fontSize = Math.max(8, Math.round(size * 0.5)) + "px";
    var cells = [];
    for (var i = 0; i < m * n; i++) {
      var c = add(grid, "div", "cell", small ? "" : g.board[i]);
      c.style.background = shade(g.board.charCodeAt(i) - 64);
      c.id = "c-" + ((i % m) + 1) + "-" + (Math.floor(i / m) + 1);
      cells.push(c);
    }
    var table = add(info, "table", "players");
    var rows = g.players.map(function (p, i) {
      var r = add(table, "tr", "p" + (i % 8));
      add(r, "td", "swatch p" + (i % 8), i + 1);
      add(r, "td", "name", p.name);
      var score = add(r, "td", "score");
      score.id = "score-" + (i + 1);
      var state = add(r, "td", "state");
      state.id = "state-" + (i + 1);
      var clock = add(r, "td", "clock");
      clock.id = "clock-" + (i + 1);
      return { score: score, state: state, clock: clock };
    });
    var log = add(info, "div", "log");
    log.id = "log";
    if (!g.recorded) note("This game's moves were not recorded (run it with --record-moves): only its start and result are shown.");
    var letters = g.board;
    function valueAt(cell) { return letters.charCodeAt(cell) - 64; }
    // The rounds as the referee computed them (src/replay/chomp.rs): a word
    // per round, a letter per player; a wrap's landing cell and a shared
    // chomp's score come from their own lists, in order.
    var words = g.steps ? g.steps.split(" ") : [];
    var STEP = { N: -m, S: m, E: 1, W: -1 };
    var MOVE = { n: "N", s: "S", e: "E", w: "W", X: "C", c: "C" };
    var times = g.clock ? expandTimes(g.clock.times) : null;
    var st = null;
    function reset() {
      var pos = [];
      for (var i = 0; i < k; i++) pos.push(g.start);
      st = { r: 0, wrap: 0, share: 0, eaten: new Uint8Array(m * n), scores: new Array(k).fill(0), pos: pos,
             trail: [pos.slice()], bank: new Array(k).fill(0), since: new Array(k).fill(0), last: null };
    }
    // Applies one round; keeps what it did (chomps: [cell, points each,
    // players...]; wraps: [player, from, to]) for drawing it.
    function apply(word) {
      var pos = st.pos.slice();
      var last = { moves: "", chomps: [], wraps: [] };
      var ate = new Array(k).fill(false);
      for (var i = 0; i < k; i++) {
        var ch = word[i];
        last.moves += MOVE[ch] || ch;
        if (STEP[ch] !== undefined) pos[i] += STEP[ch];
        else if ("nsew".indexOf(ch) >= 0) {
          last.wraps.push([i, pos[i], g.wraps[st.wrap]]);
          pos[i] = g.wraps[st.wrap++];
        } else if (ch === "C" || ch === "X") {
          var each = ch === "C" ? valueAt(pos[i]) : g.shares[st.share++];
          var same = last.chomps.filter(function (e) { return e[0] === pos[i]; })[0];
          if (same) same.push(i);
          else last.chomps.push([pos[i], each, i]);
          st.eaten[pos[i]] = 1;
          st.scores[i] += each;
          ate[i] = true;
        }
      }
      var t = times ? times[st.r] : null;
      for (var p = 0; p < k; p++) {
        if (ate[p]) { st.bank[p] = 0; st.since[p] = 0; }
        else {
          if (t) st.bank[p] += t[p];
          if (word[p] !== "-" && word[p] !== "D") st.since[p] += 1;
        }
      }
      st.pos = pos;
      st.trail.push(pos);
      if (st.trail.length > TRAIL + 1) st.trail.shift();
      st.last = last;
      st.r += 1;
    }
    function cell(i) { return "(" + ((i % m) + 1) + "," + (Math.floor(i / m) + 1) + ")"; }
    function draw(r) {
      if (!st || st.r > r) reset();
      while (st.r < r) apply(words[st.r]);
      var round = r > 0 ? st.last : null;
      for (var i = 0; i < cells.length; i++) {
        var c = cells[i];
        c.className = "cell" + (st.eaten[i] ? " empty" : "");
        c.textContent = st.eaten[i] || small ? "" : letters[i];
      }
      // Trails, oldest first, so the newest colour wins.
      for (var t = 0; t < st.trail.length - 1; t++) {
        for (var p = 0; p < k; p++) cells[st.trail[t][p]].classList.add("trail", "t" + (p % 8));
      }
      var lines = [];
      if (round) {
        round.chomps.forEach(function (e) {
          var who = e.slice(2).map(function (p) { return "P" + (p + 1); }).join("+");
          var shared = e.length > 3;
          cells[e[0]].classList.add(shared ? "shared" : "chomped");
          lines.push(who + (shared ? " share " : " chomp ") + letters[e[0]] + " at " + cell(e[0]) + ": +" + e[1] + (shared ? " each" : ""));
        });
        round.wraps.forEach(function (w) {
          cells[w[1]].classList.add("wrap-out");
          cells[w[2]].classList.add("wrap-in");
          lines.push("P" + (w[0] + 1) + " wraps: " + cell(w[1]) + " \u2192 " + cell(w[2]));
        });
        lines.unshift("moves: " + round.moves.split("").map(function (mv, p) { return "P" + (p + 1) + " " + mv; }).join(", "));
      }
      // Tokens.
      var here = {};
      for (var q = 0; q < k; q++) (here[st.pos[q]] = here[st.pos[q]] || []).push(q);
      Object.keys(here).forEach(function (ci) {
        var box = add(cells[ci], "span", "tokens");
        here[ci].forEach(function (p) {
          var dead = g.players[p].died_round !== undefined && g.players[p].died_round !== null && g.players[p].died_round <= r;
          var tk = add(box, "span", "tok p" + (p % 8) + (dead ? " dead" : ""), p + 1);
          tk.title = "player " + (p + 1);
        });
        cells[ci].classList.add("occupied");
      });
      for (var p2 = 0; p2 < k; p2++) {
        var pl = g.players[p2];
        rows[p2].score.textContent = st.scores[p2];
        var died = pl.died_round !== undefined && pl.died_round !== null && pl.died_round <= r;
        rows[p2].state.textContent = died ? (pl.fate || "dead") + " (round " + pl.died_round + ")" : "alive";
        rows[p2].state.className = "state" + (died ? " dead" : "");
        var ck = rows[p2].clock;
        ck.textContent = "";
        if (died) continue;
        if (g.clock) {
          var bar = add(ck, "span", "bar");
          var frac = Math.min(1, st.bank[p2] / g.clock.budget);
          var fill = add(bar, "span", "fill" + (frac > 0.75 ? " low" : ""));
          fill.style.width = (100 * frac).toFixed(1) + "%";
          add(ck, "span", "ms", (st.bank[p2] / 1000).toFixed(3) + " s of " + g.clock.budget / 1000 + " s");
        } else {
          add(ck, "span", "ms", st.since[p2] + " rounds unfed");
        }
      }
      if (r === words.length && g.recorded) lines.push("game over: " + (g.end || "") + " after " + r + " rounds");
      log.textContent = "";
      lines.forEach(function (l) { add(log, "div", null, l); });
    }
    return { count: words.length, unit: "round", draw: draw };
  }

  // ---- Septica ------------------------------------------------------------
  function septica(g) {
    var top = add(board, "div", "septica");
    function row(label, id) {
      var r = add(top, "div", "row");
      add(r, "span", "label", label);
      var box = add(r, "span", "cards");
      box.id = id;
      return box;
    }
    var comp = row("computer", "hand-computer");
    var tbl = row("table", "table");
    var play = row("player", "hand-player");
    var stock = add(top, "div", "stock");
    stock.id = "stock";
    var pts = add(info, "div", "points");
    pts.id = "points";
    var n = note("");
    add(info, "div", "legend-text", "dashed: the computer's card; red outline: a cut; shaded: 10 and 14, the points");
    var list = add(info, "ol", "tricks");
    list.id = "tricks";
    if (!g.recorded) n.textContent = "The plays were not recorded: only the deal is shown.";
    function draw(i) {
      var s = g.steps[i];
      [comp, tbl, play].forEach(function (b) { b.textContent = ""; });
      s.hands[0].forEach(function (v) { comp.appendChild(scard(v)); });
      s.hands[1].forEach(function (v) { play.appendChild(scard(v)); });
      s.table.forEach(function (t) {
        var c = scard(t[1], t[0] + (t[2] ? " cut" : ""));
        c.title = t[0] + (t[2] ? " (cuts)" : "");
        tbl.appendChild(c);
      });
      stock.textContent = "stock: " + s.stock + " card" + (s.stock === 1 ? "" : "s");
      pts.textContent = "computer " + s.points[0] + " \u2013 player " + s.points[1];
      if (g.recorded) n.textContent = s.note;
      list.textContent = "";
      var ends = 0;
      for (var j = 0; j <= i; j++) if (g.steps[j].end) ends++;
      for (var t = 0; t < ends; t++) {
        var tr = g.tricks[t];
        var li = add(list, "li", tr.winner);
        li.appendChild(document.createTextNode(tr.winner + " +" + tr.points + ": "));
        tr.cards.forEach(function (c) { li.appendChild(scard(c[1], c[0] + (c[2] ? " cut" : ""))); });
      }
    }
    return { count: g.steps.length - 1, unit: "step", draw: draw };
  }

  // ---- Even Steven --------------------------------------------------------
  function evensteven(g) {
    var top = add(board, "div", "evensteven");
    var r1 = add(top, "div", "row");
    add(r1, "span", "label", "hand");
    var hand = add(r1, "span", "cards");
    hand.id = "hand";
    var r2 = add(top, "div", "row");
    add(r2, "span", "label", "to cover");
    var deal = add(r2, "span", "cards");
    deal.id = "deal";
    var pairs = add(top, "div", "pairs");
    pairs.id = "pairs";
    var n = note("");
    var verdict = add(info, "div", "verdict");
    verdict.id = "verdict";
    function draw(i) {
      hand.textContent = "";
      deal.textContent = "";
      pairs.textContent = "";
      var used = {};
      for (var j = 0; j < i; j++) used[g.plays[j][1]] = true;
      g.hand.forEach(function (c) { hand.appendChild(card(c, used[c] ? "used" : "")); });
      g.deal.forEach(function (c, j) { deal.appendChild(card(c, j < i ? "used" : j === i && i < g.plays.length ? "next" : "")); });
      for (var p = 0; p < i; p++) {
        var pr = add(pairs, "div", "pair " + (g.plays[p][2] ? "ok" : "bad"));
        pr.appendChild(card(g.plays[p][0]));
        add(pr, "span", "arrow", g.plays[p][2] ? " covered by " : " not covered by ");
        pr.appendChild(card(g.plays[p][1]));
      }
      var end = i === g.plays.length;
      n.textContent = !g.recorded ? "The plays were not recorded here (a tournament keeps the deal only)."
        : end ? "outcome: " + (g.outcome || "") : "dealt: " + g.deal[i];
      verdict.textContent = "";
      if (end) {
        add(verdict, "div", null, g.winnable ? "the hand could cover every card" : "no way of playing this hand covers every card");
        if (g.assignment) {
          var a = add(verdict, "div", "assignment");
          a.id = "assignment";
          add(a, "span", null, "winning assignment: ");
          g.deal.forEach(function (d, j) {
            var pr = add(a, "span", "pair ok");
            pr.appendChild(card(d));
            add(pr, "span", "arrow", "\u2190");
            pr.appendChild(card(g.assignment[j]));
          });
        }
      }
    }
    return { count: g.plays.length, unit: "card", draw: draw };
  }

  // ---- Aces Up ------------------------------------------------------------
  function acesup(g) {
    var top = add(board, "div", "acesup");
    var piles = [];
    for (var p = 0; p < 4; p++) {
      var col = add(top, "div", "pile");
      add(col, "div", "label", "pile " + (p + 1));
      var stack = add(col, "div", "stack");
      stack.id = "pile-" + (p + 1);
      piles.push(stack);
    }
    var side = add(top, "div", "pile discard");
    add(side, "div", "label", "discards");
    var disc = add(side, "div", "stack");
    disc.id = "discards";
    var n = note("");
    var res = add(info, "div", "verdict");
    res.id = "result";
    function draw(i) {
      var st = [[], [], [], []], dealt = 0, out = [], last = null, text = "the deck, 52 cards";
      for (var j = 0; j < i; j++) {
        var op = g.ops[j];
        if (op === "d") {
          last = [dealt % 4];
          st[dealt % 4].push(g.deck[dealt]);
          text = "deal " + g.deck[dealt] + " onto pile " + (dealt % 4 + 1);
          dealt++;
        } else if (op[0] === "x") {
          var c = st[op[1]].pop();
          out.push(c);
          last = [op[1]];
          text = "discard " + c + " from pile " + (op[1] + 1);
        } else {
          var f = st[op[1]].pop();
          st[op[2]].push(f);
          last = [op[1], op[2]];
          text = "move " + f + " from pile " + (op[1] + 1) + " to empty pile " + (op[2] + 1);
        }
      }
      for (var q = 0; q < 4; q++) {
        piles[q].textContent = "";
        st[q].forEach(function (c) { piles[q].appendChild(card(c)); });
        piles[q].parentNode.classList.toggle("active", !!last && last.indexOf(q) >= 0);
      }
      disc.textContent = "";
      if (out.length) disc.appendChild(card(out[out.length - 1]));
      add(disc, "div", "count", out.length + " discarded");
      n.textContent = text + " \u2014 " + (52 - dealt) + " left to deal";
      res.textContent = "";
      if (i === g.ops.length) {
        var r = g.result;
        add(res, "div", null, "game 1: " + r.piles.join(" ") + " left, " + r.moves + " moves, " + (r.perfect ? "perfect" : r.won ? "won" : "lost"));
        if (g.games > 1) add(res, "div", null, "the reference then played " + (g.games - 1) + " rotation" + (g.games === 2 ? "" : "s") + " of the deck; " + (g.won ? "the last won" : "none won"));
      }
    }
    return { count: g.ops.length, unit: "step", draw: draw };
  }

  // ---- External judges: frames ---------------------------------------------
  var PALETTE = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#bfef45", "#469990", "#9a6324", "#800000", "#808000"];
  // The colours a judge may give (docs/judge-protocol.md, and
  // check_frame_colours in src/games/external/protocol.rs): #rgb, #rrggbb
  // or one of these names. Anything else, a url(...) above all, is ignored:
  // a record must not make the page fetch anything.
  var COLOUR_NAMES = "aqua black blue fuchsia gray green lime maroon navy olive orange purple red silver teal white yellow".split(" ");
  function colourValue(v) {
    if (typeof v !== "string") return null;
    var t = v.toLowerCase();
    if (/^#([0-9a-f]{3}|[0-9a-f]{6})$/.test(t) || COLOUR_NAMES.indexOf(t) >= 0) return t;
    return null;
  }
  function colour(ch, colours) {
    var given = colours && typeof colours === "object" && Object.prototype.hasOwnProperty.call(colours, ch) ? colourValue(colours[ch]) : null;
    if (given) return given;
    if (ch === "." || ch === " ") return null;
    if (ch === "#") return "#444";
    var code = ch.charCodeAt(0);
    var lower = ch >= "a" && ch <= "z";
    var base = lower ? code - 97 : ch >= "A" && ch <= "Z" ? code - 65 : code;
    return PALETTE[base % PALETTE.length] + (lower ? "88" : "");
  }
  function frames(g) {
    var top = add(board, "div", "frame");
    top.id = "frame";
    var n = note("");
    var extra = add(info, "div", "extra");
    if (!g.recorded) n.textContent = "No frames were recorded (run with --record-moves).";
    if (g.summary) {
      var d = add(extra, "details");
      add(d, "summary", null, "summary");
      add(d, "pre", null, JSON.stringify(g.summary, null, 1));
    }
    if (g.judge_error) add(extra, "pre", "error", JSON.stringify(g.judge_error, null, 1));
    function draw(i) {
      top.textContent = "";
      if (i === 0) {
        n.textContent = g.frames.length ? "frame 0: before the first frame" : n.textContent;
        return;
      }
      var f = g.frames[i - 1];
      if (f && typeof f === "object" && !Array.isArray(f) && Array.isArray(f.grid)) {
        var w = 0;
        f.grid.forEach(function (row) { w = Math.max(w, String(row).length); });
        var gr = add(top, "div", "grid");
        gr.style.gridTemplateColumns = "repeat(" + w + ", 1.4em)";
        f.grid.forEach(function (row, y) {
          row = String(row);
          for (var x = 0; x < w; x++) {
            var ch = row[x] || " ";
            var c = add(gr, "div", "cell", ch === "." ? "" : ch);
            c.id = "f-" + x + "-" + y;
            c.setAttribute("data-ch", ch);
            var bg = colour(ch, f.colors);
            if (bg) c.style.background = bg;
          }
        });
        // A legend (and colours) hold until a later frame gives others.
        var legend = null, colours = f.colors;
        for (var j = i - 1; j >= 0 && !legend; j--) {
          var fj = g.frames[j];
          if (fj && typeof fj === "object" && fj.legend && typeof fj.legend === "object") legend = fj.legend;
        }
        for (var j2 = i - 1; j2 >= 0 && !colours; j2--) {
          if (g.frames[j2] && g.frames[j2].colors) colours = g.frames[j2].colors;
        }
        gr.querySelectorAll(".cell").forEach(function (c) {
          var bg = colour(c.getAttribute("data-ch"), colours);
          c.style.background = bg || "";
        });
        if (legend) {
          var lg = add(top, "div", "legend");
          Object.keys(legend).forEach(function (ch) {
            var item = add(lg, "span", "item");
            var sw = add(item, "span", "cell", ch);
            var bg = colour(ch, colours);
            if (bg) sw.style.background = bg;
            add(item, "span", null, " " + legend[ch]);
          });
        }
        var rest = {};
        var any = false;
        Object.keys(f).forEach(function (key) {
          if (["grid", "text", "legend", "colors"].indexOf(key) < 0) { rest[key] = f[key]; any = true; }
        });
        n.textContent = f.text !== undefined ? String(f.text) : "frame " + i;
        if (any) add(top, "pre", "json", JSON.stringify(rest));
      } else {
        n.textContent = "frame " + i;
        add(top, "pre", "json", JSON.stringify(f, null, 2));
      }
    }
    return { count: g.frames.length, unit: "frame", draw: draw };
  }

  var VIEWERS = { chomp: chomp, septica: septica, evensteven: evensteven, acesup: acesup, frames: frames };

  window.replay = {
    games: games.length,
    show: show,
    go: go,
    step: function () { return current ? current.step : 0; },
    count: function () { return current ? current.count : 0; },
  };
  // A link can open a game at a step: PAGE.html#game=INDEX&step=S, where
  // INDEX is the record's `index` (the first such game).
  function fromHash() {
    var want = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var p = kv.split("=");
      if (p.length !== 2) return;
      // A malformed escape (a link cut or typed by hand) is ignored: the
      // page still draws.
      try {
        want[p[0]] = decodeURIComponent(p[1]);
      } catch (e) {
        return;
      }
    });
    var at = 0;
    if (want.game !== undefined) {
      for (var i = 0; i < games.length; i++) {
        if (String(games[i].index) === want.game) { at = i; break; }
      }
    }
    show(at);
    if (want.step !== undefined) go(Number(want.step));
  }
  window.addEventListener("hashchange", fromHash);
  if (games.length) fromHash();
  else add(root, "p", null, "no games");
})();
