// Every VectorIndex of sop runs the VectorIndex contract: the in-memory VectorStore, with its int8
// scan as WebAssembly SIMD and as plain JavaScript.
import { VectorStore } from '../../src/core/memory/vector-store.js';
import { vectorIndexContract } from './vector-index.js';

vectorIndexContract('VectorStore (SIMD scan)', (d) => new VectorStore(d, { simd: true }));
vectorIndexContract('VectorStore (plain JavaScript scan)', (d) => new VectorStore(d, { simd: false, initialCapacity: 16 }));
