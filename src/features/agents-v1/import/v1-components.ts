// `agent_states[role]` of an Agents 1.0 state (its component map) turned into SOP components,
// keeping the key order (it is the order of the prompt contributions).
import { basename, relative } from 'node:path';
import type { SopComponents } from '../../../format/sop/types.js';
import { has, literalText, type ImportLog, type KeyPath } from './import-log.js';
import { isObject } from '../../../shared/util/is-object.js';
import type { V1Settings } from './v1-config-block.js';
import { KNOWN_EMBEDDING_DIMENSIONS, inspectKnowledgeFile, resolveDataPath } from './v1-data-files.js';
import { readLlmBlock } from './v1-llm.js';

export interface ComponentContext {
  log: ImportLog;
  /** Pointer of the component map: ['states', state, 'agent_states', role]. */
  path: KeyPath;
  configFile: string;
  /** Folder of the SOP being written: data file paths are made relative to it. */
  outDir: string;
  settings: V1Settings;
}

const TAG = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const WEB_ENGINES = ['google', 'bing', 'serpapi'];
const LLM_KEYS = new Set(['LLM_type', 'LLM', 'log_path']);

type Out = Record<string, unknown>;
type ToolSlot = { name: string; needs: string; settings?: Record<string, string | number | boolean | string[]> };

/** `{field: value}` argument objects of Agents 1.0 components. */
function arg(value: unknown, field: string, at: KeyPath, log: ImportLog, kind: string): unknown {
  if (!isObject(value) || !has(value, field)) {
    log.warn(at, `${kind} needs {"${field}": ...} (Agents 1.0 fails without it); not carried`);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key !== field) log.warn([...at, key], `unknown field of ${kind}; not carried`);
  }
  return value[field];
}

function textArg(value: unknown, field: string, at: KeyPath, log: ImportLog, kind: string): string | undefined {
  const v = arg(value, field, at, log, kind);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    log.warn([...at, field], 'must be a string; not carried');
    return undefined;
  }
  return literalText(v);
}

function textOrList(value: unknown, field: string, at: KeyPath, log: ImportLog, kind: string): string | string[] | undefined {
  const v = arg(value, field, at, log, kind);
  if (v === undefined) return undefined;
  if (typeof v === 'string') return literalText(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.map(literalText);
  log.warn([...at, field], 'must be a string or a list of strings; not carried');
  return undefined;
}

export function convertComponents(map: Record<string, unknown>, ctx: ComponentContext): SopComponents {
  const { log, path } = ctx;
  const out: Out = {};
  const tools: ToolSlot[] = [];
  const addTool = (slot: ToolSlot) => {
    if (!('tools' in out)) out.tools = tools; // keeps the slot's place in the component order
    tools.push(slot);
  };
  const llm = readLlmBlock(map, path, log);
  for (const [key, value] of Object.entries(map)) {
    const at = [...path, key];
    if (LLM_KEYS.has(key)) continue;
    switch (key) {
      case 'style': {
        if (!isObject(value) || typeof value.role !== 'string') {
          log.warn(at, 'style needs {"role": "..."} (Agents 1.0 fails without it); not carried');
          break;
        }
        out.style = { role: literalText(value.role) };
        if (value.style !== undefined) {
          log.warnOnce('style.style', [...at, 'style'], 'ignored by Agents 1.0 (the agent\'s own "style" is used); not carried');
        }
        for (const k of Object.keys(value)) if (k !== 'role' && k !== 'style') log.warn([...at, k], 'unknown field of style; not carried');
        break;
      }
      case 'task':
      case 'rule': {
        const t = textArg(value, key, at, log, key);
        if (t !== undefined) out[key] = t;
        warnFileWrites(t, [...at, key], log);
        break;
      }
      case 'system': {
        const t = textArg(value, 'system_prompt', at, log, key);
        if (t !== undefined) out.system = t;
        break;
      }
      case 'last': {
        const t = textArg(value, 'last_prompt', at, log, key);
        if (t !== undefined) out.last = t;
        warnFileWrites(t, [...at, 'last_prompt'], log);
        break;
      }
      case 'output': {
        const t = arg(value, 'output', at, log, key);
        if (typeof t === 'string' && TAG.test(t)) out.output = t;
        else if (t !== undefined)
          log.warn([...at, 'output'], `must be a tag name (letters, digits, _ . -), got ${JSON.stringify(t)}; not carried`);
        break;
      }
      case 'demonstrations':
      case 'demonstration': {
        if (key === 'demonstration') {
          if (has(map, 'demonstrations')) {
            log.warn(at, 'misspelt "demonstration" next to "demonstrations": ignored (Agents 1.0 ignored it too)');
            break;
          }
          log.warn(at, 'misspelt component "demonstration" (Agents 1.0 silently ignored it); sop reads it as "demonstrations"');
        }
        const t = textOrList(value, 'demonstrations', at, log, key);
        if (t !== undefined) out.demonstrations = t;
        break;
      }
      case 'cot': {
        const t = textOrList(value, 'demonstrations', at, log, key);
        if (typeof t === 'string')
          log.warn([...at, 'demonstrations'], 'a string (Agents 1.0 listed it one character per line); sop uses it as one step');
        if (t !== undefined) out.cot = t;
        break;
      }
      case 'CustomizeComponent': {
        if (!isObject(value) || typeof value.template !== 'string') {
          log.warn(at, 'CustomizeComponent needs {"template": "...", "keywords": [...]}; not carried');
          break;
        }
        const keywords = Array.isArray(value.keywords)
          ? value.keywords.filter((k): k is string => typeof k === 'string' && TAG.test(k))
          : [];
        if (!Array.isArray(value.keywords) || keywords.length !== value.keywords.length) {
          log.warn([...at, 'keywords'], 'must be a list of shared-memory keys (letters, digits, _ . -); invalid ones dropped');
        }
        for (const m of value.template.matchAll(/\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g)) {
          if (!keywords.includes(m[1]!))
            log.warn([...at, 'template'], `placeholder {${m[1]}} is not in "keywords" (Agents 1.0 fails on it); sop leaves it as written`);
        }
        out.customize = { template: literalText(value.template), keywords };
        break;
      }
      case 'ExtractComponent': {
        if (!isObject(value) || !Array.isArray(value.extract_words)) {
          log.warn(at, 'ExtractComponent needs {"extract_words": [...], "system_prompt": "...", "last_prompt": "..."}; not carried');
          break;
        }
        const words = value.extract_words.filter((w): w is string => typeof w === 'string' && TAG.test(w));
        if (words.length !== value.extract_words.length)
          log.warn([...at, 'extract_words'], 'must be tag names (letters, digits, _ . -); invalid ones dropped');
        if (words.length === 0) break;
        const extract: Out = { words };
        if (typeof value.system_prompt === 'string' && value.system_prompt !== '') extract.system_prompt = literalText(value.system_prompt);
        if (typeof value.last_prompt === 'string' && value.last_prompt !== '') extract.last_prompt = literalText(value.last_prompt);
        out.extract = extract;
        break;
      }
      case 'KnowledgeBaseComponent': {
        const kb = convertKnowledge(value, at, ctx);
        if (kb) out.knowledge = kb;
        break;
      }
      case 'CodeComponent': {
        if (!isObject(value) || typeof value.file_name !== 'string') {
          log.warn(at, 'CodeComponent needs {"file_name": "...", "keyword": "..."}; not carried');
          break;
        }
        let file = basename(value.file_name);
        if (file !== value.file_name)
          log.warn(
            [...at, 'file_name'],
            `"${value.file_name}" has folders; sop writes only "${file}" inside the run's workspace (Agents 1.0 wrote anywhere)`,
          );
        if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(file)) {
          log.warn([...at, 'file_name'], `"${value.file_name}" is not a plain file name; using code.txt`);
          file = 'code.txt';
        }
        const code: Out = { file };
        if (typeof value.keyword === 'string' && TAG.test(value.keyword)) code.keyword = value.keyword;
        out.code = code;
        log.warn(at, `writes output_code/${file} inside the run's workspace (Agents 1.0 wrote to output_code/ of the working folder)`);
        break;
      }
      case 'WebSearchComponent': {
        const engine = isObject(value) ? value.engine_name : undefined;
        const settings: ToolSlot['settings'] = {};
        if (typeof engine === 'string' && WEB_ENGINES.includes(engine)) settings.engine = engine;
        else
          log.warn(
            [...at, 'engine_name'],
            `${JSON.stringify(engine)} is a placeholder, not one of ${WEB_ENGINES.join(', ')} (Agents 1.0 fails to start with it)`,
          );
        if (isObject(value) && value.api !== undefined)
          log.warn(
            [...at, 'api'],
            'API keys are never copied into a SOP; the executor bound to the web_search slot reads its key from the environment',
          );
        addTool({
          name: 'web_search',
          needs: 'a web search service (Google Custom Search, Bing or SerpApi) reached over the network, and its API key',
          settings,
        });
        log.warn(
          at,
          'becomes the tool slot "web_search": it needs a network service and an API key, so it does nothing until bound to an executor (the run continues without it)',
        );
        break;
      }
      case 'FlightComponent': {
        for (const k of ['api', 'secret']) {
          if (isObject(value) && value[k] !== undefined)
            log.warn(
              [...at, k],
              'credentials are never copied into a SOP; the executor bound to the flight_search slot reads them from the environment',
            );
        }
        addTool({ name: 'flight_search', needs: 'the Amadeus flight offers API over the network, with a client id and secret' });
        log.warn(
          at,
          'becomes the tool slot "flight_search": it needs a network service and an API key, so it does nothing until bound to an executor (the run continues without it)',
        );
        break;
      }
      case 'CategoryRequirementsComponent': {
        const paths =
          isObject(value) && Array.isArray(value.information_path)
            ? value.information_path.filter((p): p is string => typeof p === 'string')
            : [];
        const files: string[] = [];
        paths.forEach((p, i) => {
          const found = resolveDataPath(p, ctx.configFile);
          if (!found) log.warn([...at, 'information_path', i], `file "${p}" not found next to the config or in a folder above it`);
          files.push(found ? relative(ctx.outDir, found) || basename(found) : p);
        });
        const settings: NonNullable<ToolSlot['settings']> = { category_files: files };
        const s = ctx.settings.shopping;
        if (s.searchUrl !== undefined) settings.search_url = s.searchUrl;
        settings.min_category_similarity = s.minCategorySim ?? 0.7;
        settings.fetch_size = s.fetchSize ?? 5;
        addTool({ name: 'product_search', needs: 'a product search service (config.SHOPPING_SEARCH) reached over the network', settings });
        log.warn(
          at,
          'becomes the tool slot "product_search": it needs a network service and an API key, so it does nothing until bound to an executor (the run continues without it)',
        );
        break;
      }
      case 'StaticComponent':
        log.warn(at, 'has no effect in Agents 1.0 (its fixed reply was never used); not carried');
        break;
      case 'WebCrawlComponent':
      case 'FunctionComponent':
        log.warn(at, `${key} cannot be constructed in Agents 1.0 (it fails at load); not carried`);
        break;
      case 'controller_type':
        log.warn(at, "a controller setting inside a role's components has no effect; not carried");
        break;
      default:
        log.warn(at, `unknown component "${key}" (Agents 1.0 silently ignored it); not carried`);
    }
  }
  if (llm) out.llm = llm;
  return out;
}

/** Rules asking for <title>/<python> replies made Agents 1.0 write files as a side effect. */
function warnFileWrites(text: string | undefined, at: KeyPath, log: ImportLog): void {
  if (text && text.includes('<title>') && text.includes('<python>')) {
    log.warnOnce(
      'title-python',
      at,
      "asks for <title>/<python> replies, which made Agents 1.0 write output_code/<title> from any message; sop records such replies as messages only (CodeComponent writes into the run's workspace)",
    );
  }
}

function convertKnowledge(value: unknown, at: KeyPath, ctx: ComponentContext): Out | undefined {
  const { log } = ctx;
  if (!isObject(value) || typeof value.knowledge_path !== 'string') {
    log.warn(at, 'KnowledgeBaseComponent needs {"knowledge_path": "...", "type": "QA", "top_k": N}; not carried');
    return undefined;
  }
  const mode = value.type === 'QA' ? 'qa' : 'chunk';
  const topK = typeof value.top_k === 'number' && Number.isInteger(value.top_k) && value.top_k >= 1 ? value.top_k : 1;
  if (value.top_k !== undefined && topK !== value.top_k) log.warn([...at, 'top_k'], `must be a whole number of at least 1; using ${topK}`);
  const found = resolveDataPath(value.knowledge_path, ctx.configFile);
  let path = value.knowledge_path;
  if (!found) {
    log.warn(
      [...at, 'knowledge_path'],
      `file "${value.knowledge_path}" not found next to the config or in a folder above it; the run will fail when this role speaks`,
    );
  } else {
    path = relative(ctx.outDir, found) || basename(found);
    const facts = inspectKnowledgeFile(found, mode);
    if (typeof facts === 'string') {
      log.warn([...at, 'knowledge_path'], `"${value.knowledge_path}": ${facts}`);
    } else {
      if (facts.incomplete > 0)
        log.warn(
          [...at, 'knowledge_path'],
          `${facts.incomplete} of ${facts.entries} entries lack ${mode === 'qa' ? '"q" and "a"' : '"chunk"'}; they are skipped`,
        );
      const model = ctx.settings.embedModel ?? 'text-embedding-ada-002';
      const expected = KNOWN_EMBEDDING_DIMENSIONS[model];
      const dims = facts.dimensions;
      if (expected !== undefined && dims.some((d) => d !== expected)) {
        log.warnOnce(
          `kb-dims:${found}`,
          [...at, 'knowledge_path'],
          `stored vectors have ${dims.join('/')} dimensions but Embed_Model "${model}" makes ${expected}-dimensional ones (Agents 1.0 fails comparing them); sop ignores the stored vectors and re-embeds the text`,
        );
      }
      log.warnOnce(
        `kb-reembed:${found}`,
        [...at, 'knowledge_path'],
        `stored vectors come from a model sop does not run (${dims.join('/') || 'no'} dimensions): the ${mode === 'qa' ? 'questions' : 'chunks'} are re-embedded with the run's embedder and cached. Unlike Agents 1.0 (which queried with an empty string${mode === 'qa' ? ' and ignored top_k' : ''}), the query is what the role just observed and top_k is honoured. Its fixed threshold (${mode === 'qa' ? '0.75' : '0.5'}) suited ada-002 similarities; sop's default follows the embedder (knowledge.threshold sets it)`,
      );
    }
  }
  if (value.type !== undefined && value.type !== 'QA') {
    if (typeof value.type !== 'string') log.warn([...at, 'type'], 'must be "QA" or a chunk mode name; using chunk mode');
  }
  for (const k of Object.keys(value)) {
    if (!['knowledge_path', 'type', 'top_k'].includes(k)) log.warn([...at, k], 'unknown field of KnowledgeBaseComponent; not carried');
  }
  // No threshold: Agents 1.0's fixed 0.75/0.5 suit ada-002 vectors; the default follows the embedder.
  return { path, mode, top_k: topK };
}
