// The `config` block of an Agents 1.0 file (process environment variables in the original):
// numbers are parsed strictly (the original evaluated them as Python), API keys are never
// copied, and every key that has no place in a SOP is reported.
import { has, type ImportLog } from './import-log.js';
import { isObject } from '../../../shared/util/is-object.js';

export interface V1Settings {
  maxChatHistory: number;
  topK: number;
  /** ACTIVE_MODE "0" (the inverted flag): concise replies. */
  concise: boolean;
  userNames: string[];
  apiBase?: string;
  embedModel?: string;
  /** Settings of the shopping component (CategoryRequirementsComponent). */
  shopping: { searchUrl?: string; minCategorySim?: number; fetchSize?: number };
}

const DEFAULT_MAX_CHAT_HISTORY = 10;

function parseNumber(value: unknown, integer: boolean): number | undefined {
  if (typeof value === 'number') return integer && !Number.isInteger(value) ? undefined : value;
  if (typeof value !== 'string') return undefined;
  const re = integer ? /^\s*-?\d+\s*$/ : /^\s*-?(\d+(\.\d*)?|\.\d+)\s*$/;
  return re.test(value) ? Number(value) : undefined;
}

/** Keys the shopping component reads; reported as unused when no role has that component. */
const SHOPPING_KEYS = ['SHOPPING_SEARCH', 'MIN_CATEGORY_SIM', 'FETSIZE'];

export function readConfigBlock(config: unknown, log: ImportLog, usesShopping: boolean): V1Settings {
  const out: V1Settings = { maxChatHistory: DEFAULT_MAX_CHAT_HISTORY, topK: 0, concise: false, userNames: [], shopping: {} };
  if (!isObject(config)) {
    log.error(['config'], 'must be an object of settings (strings)');
    return out;
  }
  const at = (key: string) => ['config', key];
  if (!has(config, 'MAX_CHAT_HISTORY')) {
    log.warn(['config'], `has no MAX_CHAT_HISTORY (Agents 1.0 fails without it); using ${DEFAULT_MAX_CHAT_HISTORY}`);
  }
  for (const [key, value] of Object.entries(config)) {
    const empty = value === '' || value === undefined || value === null;
    switch (key) {
      case 'API_KEY':
        log.warn(
          at(key),
          'API keys are never copied into a SOP; set OPENAI_API_KEY in the environment (or run against a local server with --base-url, or a cassette with --llm replay:FILE)',
        );
        break;
      case 'API_BASE':
        if (!empty) {
          if (typeof value === 'string') out.apiBase = value;
          else log.warn(at(key), 'must be a URL string; not carried');
        }
        break;
      case 'PROXY':
        if (!empty) log.warn(at(key), 'not carried: set HTTPS_PROXY / HTTP_PROXY in the environment instead');
        break;
      case 'MAX_CHAT_HISTORY': {
        const n = parseNumber(value, true);
        if (n === undefined || n < 1) log.error(at(key), `must be a whole number of at least 1, got ${JSON.stringify(value)}`);
        else out.maxChatHistory = n;
        break;
      }
      case 'TOP_K': {
        if (empty) break;
        const n = parseNumber(value, true);
        if (n === undefined || n < 0) log.error(at(key), `must be a whole number (0 disables retrieval), got ${JSON.stringify(value)}`);
        else out.topK = n;
        break;
      }
      case 'ACTIVE_MODE':
        // The inverted flag of the original: exactly "0" turns concise mode ON.
        out.concise = value === '0';
        if (out.concise)
          log.warn(
            at(key),
            '"0" turns concise mode ON in Agents 1.0 (the flag is inverted): every system and last prompt asks for short replies; carried as agents_v1.concise: true',
          );
        break;
      case 'User_Names': {
        if (empty) break;
        let names: unknown;
        try {
          names = typeof value === 'string' ? JSON.parse(value) : value;
        } catch {
          names = undefined;
        }
        if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) {
          log.error(at(key), `must be a JSON list of agent names, e.g. "[\\"User\\"]", got ${JSON.stringify(value)}`);
        } else {
          out.userNames = names;
        }
        break;
      }
      case 'Embed_Model':
        if (!empty && typeof value === 'string') {
          out.embedModel = value;
          log.warn(
            at(key),
            `not carried: sop embeds with environment.embedder (default "local", offline); to use this model set "embedder": "${value === 'text-embedding-ada-002' ? 'openai:text-embedding-ada-002' : `transformers:${value}`}"`,
          );
        }
        break;
      case 'SHOPPING_SEARCH':
        if (!empty && typeof value === 'string') {
          out.shopping.searchUrl = value;
          if (!/^https?:\/\//.test(value))
            log.warn(
              at(key),
              `"${value}" is a placeholder, not a URL; the product search tool slot cannot work until it is bound to a real service`,
            );
        }
        break;
      case 'MIN_CATEGORY_SIM': {
        const n = parseNumber(value, false);
        if (n === undefined) log.warn(at(key), `must be a number, got ${JSON.stringify(value)}; not carried`);
        else out.shopping.minCategorySim = n;
        break;
      }
      case 'FETSIZE': {
        const n = parseNumber(value, true);
        if (n === undefined) log.warn(at(key), `must be a whole number, got ${JSON.stringify(value)}; not carried`);
        else out.shopping.fetchSize = n;
        break;
      }
      case 'GRADIO':
        log.warn(at(key), 'not carried: only the Agents 1.0 web UI read it');
        break;
      case 'TOY_INFO_PATH':
        log.warn(at(key), 'not carried: Agents 1.0 never read it (the shopping component takes information_path)');
        break;
      default:
        log.warn(at(key), 'unknown setting; not carried');
    }
  }
  if (!usesShopping) {
    for (const key of SHOPPING_KEYS) {
      if (has(config, key))
        log.warn(at(key), 'not carried: only the shopping component (CategoryRequirementsComponent) uses it, and no role has one');
    }
  }
  return out;
}
