// The seat page and the runner page (docs/seats.md). The seat page is a shell: its script reads
// the seat's JSON API and builds the page with DOM calls and textContent only, never HTML from
// content (persona names, messages and action text are data, shown as text). The runner page is
// rendered on the server with every value escaped.
import type { SeatOverview } from '../../features/seats/desk.js';
import { esc } from '../view/html.js';

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;max-width:52rem;margin:1.5rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem}h2{font-size:1.05rem;margin:1.2rem 0 .4rem}.msg{border-left:3px solid #8ab;padding:.2rem .6rem;margin:.4rem 0;white-space:pre-wrap}
.who{font-weight:600}.status{padding:.4rem .6rem;background:#eef;border-radius:4px}.countdown{font-weight:600;color:#a40}
pre{background:#f6f6f6;padding:.5rem;white-space:pre-wrap;word-break:break-word}label{display:block;margin:.3rem 0}
textarea{width:100%;min-height:5rem}.error{color:#b00}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem}`;

export function seatPage(title: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${esc(title)}: seat</title><style>${STYLE}</style></head><body>
<h1>${esc(title)}</h1>
<div id="join"></div>
<p id="status" class="status">Loading…</p>
<p id="countdown" class="countdown"></p>
<div id="sees"></div>
<div id="act"></div>
<p id="error" class="error"></p>
<script src="/static/seat.js"></script>
</body></html>`;
}

export function runnerPage(title: string, seats: readonly SeatOverview[]): string {
  const rows = seats
    .map(
      (s) =>
        `<tr><td>${esc(s.seat)}</td><td>${s.who !== undefined ? esc(s.who) : s.joinedAt !== undefined ? '<em>(no name given)</em>' : '<em>not joined</em>'}</td><td>${esc(s.joinedAt ?? '')}</td><td>${esc(s.status)}</td><td>${s.answered}</td></tr>`,
    )
    .join('');
  const joined = seats.filter((s) => s.joinedAt !== undefined).length;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="3">
<title>${esc(title)}: seats</title><style>${STYLE}</style></head><body>
<h1>${esc(title)}: seats</h1><p id="joined">${joined} of ${seats.length} seats joined</p>
<table id="seats"><thead><tr><th>seat</th><th>who</th><th>joined at</th><th>status</th><th>answers</th></tr></thead><tbody>${rows}</tbody></table>
</body></html>`;
}

/** The seat page's script: polls the state, renders it as text, sends answers with an idempotency key. */
export const SEAT_JS = `'use strict';
(function () {
  var base = location.pathname.replace(/\\/+$/, '');
  var $ = function (id) { return document.getElementById(id); };
  var el = function (tag, text, cls) { var e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
  var shown = '';
  var deadlineAt = null;
  var sending = false;
  function post(path, body) {
    return fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (b) { return { status: r.status, body: b }; }); });
  }
  function showJoin(joined) {
    var box = $('join');
    box.textContent = '';
    if (joined) return;
    var name = el('input'); name.id = 'name'; name.placeholder = 'your name'; name.maxLength = 80;
    var go = el('button', 'Join'); go.id = 'join-button';
    go.onclick = function () { post('/join', { name: name.value }).then(function () { box.textContent = ''; refresh(); }); };
    box.appendChild(el('label', 'Your name: ')).appendChild(name);
    box.appendChild(go);
  }
  function renderSees(s) {
    var box = $('sees');
    box.textContent = '';
    if (!s) return;
    box.appendChild(el('h2', 'You play'));
    box.appendChild(el('pre', s.persona, 'persona'));
    if (s.environment) { box.appendChild(el('h2', 'Setting')); box.appendChild(el('pre', s.environment, 'environment')); }
    if (s.summary) { box.appendChild(el('h2', 'Summary so far')); box.appendChild(el('pre', s.summary, 'summary')); }
    if (s.messages) {
      box.appendChild(el('h2', 'Messages you see'));
      var list = el('div'); list.id = 'messages';
      s.messages.forEach(function (m) {
        var d = el('div', undefined, 'msg');
        d.appendChild(el('span', m.sender + ' (' + m.role + ')' + (m.to ? ' to ' + m.to : '') + ': ', 'who'));
        d.appendChild(el('span', m.content, 'content'));
        list.appendChild(d);
      });
      box.appendChild(list);
    }
    if (s.clock) box.appendChild(el('p', 'Step ' + s.step + ', ' + s.clock));
    if (s.observation !== undefined) { box.appendChild(el('h2', 'What you see')); var o = el('pre', JSON.stringify(s.observation, null, 2)); o.id = 'observation'; box.appendChild(o); }
    if (s.snapshot !== undefined && s.snapshot !== '') { box.appendChild(el('h2', 'The world now')); box.appendChild(el('pre', typeof s.snapshot === 'string' ? s.snapshot : JSON.stringify(s.snapshot, null, 2), 'snapshot')); }
    if (s.memory) { box.appendChild(el('h2', 'You remember')); box.appendChild(el('pre', s.memory, 'memory')); }
  }
  function field(name, schema) {
    var t = schema && schema.type;
    var input;
    if (schema && Array.isArray(schema.enum)) {
      input = el('select');
      schema.enum.forEach(function (v) { var o = el('option', v); o.value = JSON.stringify(v); input.appendChild(o); });
      input.dataset.kind = 'json';
    } else if (t === 'boolean') { input = el('input'); input.type = 'checkbox'; input.dataset.kind = 'boolean'; }
    else if (t === 'number' || t === 'integer') { input = el('input'); input.type = 'number'; input.dataset.kind = 'number'; }
    else { input = el('input'); input.type = 'text'; input.dataset.kind = 'string'; }
    input.name = name;
    var label = el('label', name + (schema && schema.description ? ' (' + schema.description + ')' : '') + ': ');
    label.appendChild(input);
    return label;
  }
  function renderAct(st) {
    var box = $('act');
    box.textContent = '';
    if (st.status !== 'your_turn') return;
    var key = st.question + ':' + Math.random().toString(36).slice(2) + Date.now().toString(36);
    var form = el('form'); form.id = 'answer-form';
    var read;
    if (st.kind === 'turn') {
      var text = el('textarea'); text.id = 'answer'; text.name = 'answer';
      form.appendChild(el('label', 'Your message:')).appendChild(text);
      if (st.actions.length) {
        var cmds = el('ul'); cmds.id = 'actions';
        st.actions.forEach(function (a) { cmds.appendChild(el('li', a.name + (a.description ? ': ' + a.description : ''), 'action')); });
        form.appendChild(el('p', 'Commands:')); form.appendChild(cmds);
      }
      read = function () { return text.value; };
    } else {
      var pick = el('select'); pick.id = 'action';
      st.actions.forEach(function (a) { var o = el('option', a.name + (a.description ? ': ' + a.description : ''), 'action'); o.value = a.name; pick.appendChild(o); });
      form.appendChild(el('label', 'Action: ')).appendChild(pick);
      var args = el('div'); args.id = 'args'; form.appendChild(args);
      var fill = function () {
        args.textContent = '';
        var a = st.actions.filter(function (x) { return x.name === pick.value; })[0];
        var props = (a && a.parameters && a.parameters.properties) || {};
        Object.keys(props).forEach(function (k) { args.appendChild(field(k, props[k])); });
      };
      pick.onchange = fill; fill();
      read = function () {
        var out = {};
        Array.prototype.forEach.call(args.querySelectorAll('input,select'), function (i) {
          var k = i.dataset.kind;
          if (k === 'boolean') out[i.name] = i.checked;
          else if (k === 'number') { if (i.value !== '') out[i.name] = Number(i.value); }
          else if (k === 'json') out[i.name] = JSON.parse(i.value);
          else if (i.value !== '') out[i.name] = i.value;
        });
        return { name: pick.value, args: out };
      };
    }
    var send = el('button', 'Send'); send.type = 'submit'; send.id = 'send';
    form.appendChild(send);
    if (st.default !== null) form.appendChild(el('p', 'At the deadline you take: ' + (typeof st.default === 'string' ? st.default : JSON.stringify(st.default)), 'default'));
    form.onsubmit = function (e) {
      e.preventDefault();
      if (sending) return;
      sending = true;
      post('/answer', { key: key, question: st.question, answer: read() }).then(function (r) {
        sending = false;
        $('error').textContent = r.status === 200 ? '' : (r.body && r.body.error) || ('error ' + r.status);
        refresh();
      }, function () { sending = false; });
    };
    box.appendChild(form);
  }
  function render(st) {
    var sig = JSON.stringify([st.status, st.question, st.sees]);
    $('status').textContent = st.status === 'your_turn' ? 'Your turn (' + (st.state || '') + ')' : st.status === 'finished' ? 'The run is over. Thank you.' : 'Waiting for your turn…';
    $('status').dataset.status = st.status;
    deadlineAt = st.deadline_ms == null ? null : Date.now() + st.deadline_ms;
    if (sig === shown) return;
    shown = sig;
    showJoin(!!st.who);
    renderSees(st.sees);
    renderAct(st);
  }
  function tick() {
    var c = $('countdown');
    if (deadlineAt === null) { c.textContent = ''; return; }
    c.textContent = Math.max(0, Math.ceil((deadlineAt - Date.now()) / 1000)) + ' s left';
  }
  function refresh() {
    return fetch(base + '/state').then(function (r) { return r.json(); }).then(render, function () {});
  }
  refresh();
  setInterval(function () { if ($('status').dataset.status !== 'finished') refresh(); }, 1000);
  setInterval(tick, 250);
})();
`;
