// Builds a tiny BERT-style sentence model in a folder, the way a real one is laid out
// (config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx), so the transformers
// embedder's real loading, tokenising, ONNX inference and pooling run without a download.
//
// The ONNX graph is hand-encoded protobuf: last_hidden_state = Gather(E, input_ids) * mask,
// i.e. a token-embedding lookup with padding zeroed. The tokenizer is a WordPiece vocabulary
// with a BERT normaliser and [CLS]/[SEP] template. `expectedEmbedding` computes what mean
// pooling + L2 normalisation of that graph must give, independently of the library.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// --- protobuf wire format -------------------------------------------------------------------
function varint(n: number | bigint): number[] {
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}
const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, n: number | bigint) => [...key(field, 0), ...varint(n)];
const bytes = (field: number, b: ArrayLike<number>) => [...key(field, 2), ...varint(b.length), ...Array.from(b)];
const str = (field: number, s: string) => bytes(field, Buffer.from(s, 'utf8'));
const msg = (field: number, parts: number[][]) => bytes(field, parts.flat());

// --- ONNX messages (field numbers from onnx.proto) --------------------------------------------
const FLOAT = 1,
  INT64 = 7;
type Dim = number | string;
function valueInfo(field: number, name: string, elemType: number, dims: Dim[]): number[] {
  const shape = dims.map((d) => msg(1, [typeof d === 'number' ? int(1, d) : str(2, d)]));
  return msg(field, [str(1, name), msg(2, [msg(1, [int(1, elemType), msg(2, shape)])])]);
}
function node(inputs: string[], outputs: string[], op: string, name: string, attrs: number[][] = []): number[] {
  return msg(1, [...inputs.map((i) => str(1, i)), ...outputs.map((o) => str(2, o)), str(3, name), str(4, op), ...attrs]);
}
function intAttr(name: string, value: number): number[] {
  const INT = 2;
  return msg(5, [str(1, name), int(3, value), int(20, INT)]);
}
function tensor(field: number, name: string, dims: number[], dataType: number, raw: Uint8Array): number[] {
  return msg(field, [...dims.map((d) => int(1, d)), int(2, dataType), str(8, name), bytes(9, raw)]);
}

export const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
export const WORDS = [
  'the',
  'we',
  'are',
  'a',
  'of',
  'to',
  'is',
  'on',
  'for',
  'do',
  'need',
  'which',
  'about',
  'lunch',
  'team',
  'friday',
  'index',
  'database',
  'table',
  'query',
  'slow',
  'speed',
  'up',
  'weather',
  'rain',
  'coffee',
  'password',
  'hash',
  'party',
  'budget',
  'deploy',
  'image',
  'docker',
  'fail',
  'hiking',
  'mountain',
  'weekend',
];
export const SUFFIXES = ['##es', '##s', '##ing', '##ed'];

export interface TinyModel {
  dir: string;
  vocab: string[];
  dimension: number;
  /** The embedding table, row per token id. */
  table: Float32Array;
}

/** Deterministic pseudo-random table; "related" tokens share a direction so similarity means something. */
function buildTable(vocab: string[], dim: number): Float32Array {
  let seed = 12345;
  const rnd = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32 - 0.5;
  };
  const table = new Float32Array(vocab.length * dim);
  for (let i = 0; i < table.length; i++) table[i] = rnd();
  // Word pieces that are only grammar get small vectors, so content words dominate the mean.
  for (const [i, tok] of vocab.entries()) {
    if (
      SPECIAL.includes(tok) ||
      tok.startsWith('##') ||
      ['the', 'we', 'are', 'a', 'of', 'to', 'is', 'on', 'for', 'do', 'which', 'about', 'up'].includes(tok)
    ) {
      for (let j = 0; j < dim; j++) table[i * dim + j]! *= 0.05;
    }
  }
  return table;
}

export function buildTinyModel(dimension = 16): TinyModel {
  const dir = mkdtempSync(join(tmpdir(), 'sop-tiny-model-'));
  mkdirSync(join(dir, 'onnx'));
  const vocab = [...SPECIAL, ...WORDS, ...SUFFIXES];
  const table = buildTable(vocab, dimension);

  const axes = new Uint8Array(new BigInt64Array([-1n]).buffer);
  const graph = [
    node(['embeddings', 'input_ids'], ['gathered'], 'Gather', 'lookup', [intAttr('axis', 0)]),
    node(['attention_mask'], ['mask_f'], 'Cast', 'mask_to_float', [intAttr('to', FLOAT)]),
    node(['mask_f', 'unsqueeze_axes'], ['mask_3d'], 'Unsqueeze', 'mask_expand'),
    node(['gathered', 'mask_3d'], ['last_hidden_state'], 'Mul', 'mask_apply'),
    str(2, 'tiny_sentence_encoder'),
    tensor(5, 'embeddings', [vocab.length, dimension], FLOAT, new Uint8Array(table.buffer.slice(0))),
    tensor(5, 'unsqueeze_axes', [1], INT64, axes),
    valueInfo(11, 'input_ids', INT64, ['batch', 'sequence']),
    valueInfo(11, 'attention_mask', INT64, ['batch', 'sequence']),
    valueInfo(12, 'last_hidden_state', FLOAT, ['batch', 'sequence', dimension]),
  ];
  const model = [int(1, 8), str(2, 'sop-tests'), msg(7, graph), msg(8, [str(1, ''), int(2, 13)])];
  writeFileSync(join(dir, 'onnx', 'model.onnx'), new Uint8Array(model.flat()));

  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify(
      {
        model_type: 'bert',
        architectures: ['BertModel'],
        hidden_size: dimension,
        vocab_size: vocab.length,
        num_attention_heads: 1,
        num_hidden_layers: 0,
        max_position_embeddings: 64,
        pad_token_id: 0,
      },
      null,
      2,
    ),
  );
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  writeFileSync(
    join(dir, 'tokenizer.json'),
    JSON.stringify(
      {
        version: '1.0',
        truncation: null,
        padding: null,
        added_tokens: SPECIAL.map((t, i) => special(i, t)),
        normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
        pre_tokenizer: { type: 'BertPreTokenizer' },
        post_processor: {
          type: 'TemplateProcessing',
          single: [
            { SpecialToken: { id: '[CLS]', type_id: 0 } },
            { Sequence: { id: 'A', type_id: 0 } },
            { SpecialToken: { id: '[SEP]', type_id: 0 } },
          ],
          pair: [
            { SpecialToken: { id: '[CLS]', type_id: 0 } },
            { Sequence: { id: 'A', type_id: 0 } },
            { SpecialToken: { id: '[SEP]', type_id: 0 } },
            { Sequence: { id: 'B', type_id: 1 } },
            { SpecialToken: { id: '[SEP]', type_id: 1 } },
          ],
          special_tokens: {
            '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
            '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
          },
        },
        decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
        model: {
          type: 'WordPiece',
          unk_token: '[UNK]',
          continuing_subword_prefix: '##',
          max_input_chars_per_word: 100,
          vocab: Object.fromEntries(vocab.map((t, i) => [t, i])),
        },
      },
      null,
      2,
    ),
  );
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify(
      {
        tokenizer_class: 'BertTokenizer',
        do_lower_case: true,
        model_max_length: 64,
        pad_token: '[PAD]',
        unk_token: '[UNK]',
        cls_token: '[CLS]',
        sep_token: '[SEP]',
        mask_token: '[MASK]',
      },
      null,
      2,
    ),
  );
  return { dir, vocab, dimension, table };
}

/** Greedy longest-match WordPiece of a lower-cased, punctuation-split text, with [CLS]/[SEP]. */
export function tokenIds(model: TinyModel, text: string): number[] {
  const index = new Map(model.vocab.map((t, i) => [t, i]));
  const ids = [2];
  for (const word of text.toLowerCase().match(/[a-z0-9]+|[^\sa-z0-9]/g) ?? []) {
    const pieces: number[] = [];
    let start = 0;
    let ok = true;
    while (start < word.length) {
      let end = word.length;
      let found: number | undefined;
      while (end > start) {
        const piece = (start > 0 ? '##' : '') + word.slice(start, end);
        found = index.get(piece);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) {
        ok = false;
        break;
      }
      pieces.push(found);
      start = end;
    }
    ids.push(...(ok ? pieces : [1]));
  }
  ids.push(3);
  return ids;
}

/** Mean of the token rows, L2-normalised: what the pipeline must return for `text`. */
export function expectedEmbedding(model: TinyModel, text: string): Float32Array {
  const ids = tokenIds(model, text);
  const d = model.dimension;
  const v = new Float64Array(d);
  for (const id of ids) for (let j = 0; j < d; j++) v[j]! += model.table[id * d + j]!;
  let norm = 0;
  for (let j = 0; j < d; j++) {
    v[j]! /= ids.length;
    norm += v[j]! * v[j]!;
  }
  norm = Math.sqrt(norm);
  return Float32Array.from(v, (x) => x / norm);
}
