// The game systems and their boards, as the server describes them
// (GET /api/variants): the client draws every board from this data and
// derives no geometry of its own. Loaded once before the first page.

import { api } from './api.js';

let list = [];
const byKey = new Map();

/** Loads the variants (and their boards) from the server; resolves when known. */
export async function loadVariants() {
  list = await api.variants();
  byKey.clear();
  for (const v of list) byKey.set(v.key, v);
  return list;
}

/** The variants the server knows, in the order to offer them. */
export function variants() {
  return list;
}

/** The board description of a variant (`sanguo` when none is named). */
export function boardOf(key = 'sanguo') {
  const v = byKey.get(key || 'sanguo');
  if (!v) throw new Error(`no board for variant ${key}`);
  return v.board;
}
