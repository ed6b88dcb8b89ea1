// Child process of bench/langgraph.mjs: the round-robin conversation of
// bench/fixtures/roundrobin.sop.json built as a LangGraph.js StateGraph: five speaker nodes in a
// ring, messages in MessagesAnnotation state, a FakeListChatModel from @langchain/core giving the
// same texts as our mock LLM, the MemorySaver in-memory checkpointer. Each node builds the same
// prompt as our engine does (system prompt, last 10 messages, closing instruction). Per-turn
// overhead = time between consecutive node starts minus the time inside model.invoke (which
// includes LangChain's own callback machinery, so LangGraph is measured at its most favourable).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotation, END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { FIXTURES } from '../lib/engine.mjs';
import { mean, median, p95 } from '../lib/stats.mjs';

const turns = Number(process.argv[2] ?? 2000);
const sop = JSON.parse(readFileSync(join(FIXTURES, 'roundrobin.sop.json'), 'utf8'));
const state = sop.states.talk;
const topic = sop.inputs.topic.default;
const window = sop.environment.max_chat_history;
const speakers = state.roles.map((role) => {
  const agent = Object.keys(sop.agents).find((a) => sop.agents[a].roles.talk === role);
  const c = state.components[role];
  const system =
    `${state.environment_prompt.replace('{{inputs.topic}}', topic)}\n` +
    `You are ${agent}, playing the role of ${role}. Speak in this style: ${sop.agents[agent].style}\n` +
    `The task you need to execute is: ${c.task}\nThe rules you need to follow are: ${c.rule}\n`;
  const last = `Now continue the conversation on behalf of ${agent} (${role}). Be natural and coherent, say something new rather than repeating what others said, and do not write other people's lines.`;
  return { agent, role, system, last };
});
// The texts our mock LLM answers, turn by turn.
const responses = Array.from({ length: turns }, (_, i) => {
  const s = speakers[i % speakers.length];
  return `[mock] ${s.agent} (${s.role}) speaks in talk, turn ${i + 1}.`;
});
const model = new FakeListChatModel({ responses });

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  turn: Annotation({ reducer: (_old, next) => next, default: () => 0 }),
});
const starts = [];
const llmMs = [];
const graph = new StateGraph(State);
speakers.forEach((s) => {
  graph.addNode(s.agent, async (st) => {
    starts.push(performance.now());
    const recent = st.messages.slice(-window);
    const prompt = [
      new SystemMessage(s.system),
      ...recent.map((m) => (m.name === s.agent ? new AIMessage(m.content) : new HumanMessage(`${m.name}: ${m.content}`))),
      new HumanMessage(s.last),
    ];
    const t = performance.now();
    const reply = await model.invoke(prompt);
    llmMs.push(performance.now() - t);
    return { messages: [new AIMessage({ content: reply.content, name: s.agent })], turn: st.turn + 1 };
  });
});
graph.addEdge(START, speakers[0].agent);
speakers.forEach((s, i) => {
  const next = speakers[(i + 1) % speakers.length].agent;
  graph.addConditionalEdges(s.agent, (st) => (st.turn >= turns ? END : next), [next, END]);
});
const app = graph.compile({ checkpointer: new MemorySaver() });

const started = performance.now();
const out = await app.invoke({ messages: [], turn: 0 }, { configurable: { thread_id: 'bench' }, recursionLimit: turns + 10 });
const ended = performance.now();
starts.push(ended);
if (out.messages.length !== turns) throw new Error(`LangGraph run ended with ${out.messages.length} messages, expected ${turns}`);
// Turn i runs from the start of node i to the start of node i+1 (the last one to the end of invoke).
const overheadUs = llmMs.map((l, i) => (starts[i + 1] - starts[i] - l) * 1000);
process.stdout.write(
  JSON.stringify({
    side: 'langgraph',
    turns,
    median_us: median(overheadUs),
    p95_us: p95(overheadUs),
    mean_us: mean(overheadUs),
    first200_median_us: median(overheadUs.slice(0, 200)),
    last200_median_us: median(overheadUs.slice(-200)),
    total_ms: ended - started,
    llm_ms: llmMs.reduce((a, b) => a + b, 0),
    peak_rss_kb: process.resourceUsage().maxRSS,
    messages: out.messages.length,
  }) + '\n',
);
