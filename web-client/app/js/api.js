// The HTTP API of protocol/ (JSON) and the session token kept in localStorage.

const TOKEN_KEY = 'sanguo.session';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code;
  }
}

async function request(method, path, body, token) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiError(res.status, data && data.code, (data && data.message) || text);
  return data;
}

let session = null;
try {
  session = JSON.parse(localStorage.getItem(TOKEN_KEY) || 'null');
} catch {
  session = null;
}

/** The current session ({token, player, name, account}), creating a guest one if needed. */
export async function ensureSession() {
  if (session) {
    try {
      await request('GET', '/api/me', undefined, session.token);
      return session;
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 401) return session;
    }
  }
  session = await request('POST', '/api/sessions', {});
  localStorage.setItem(TOKEN_KEY, JSON.stringify(session));
  return session;
}

export function currentSession() {
  return session;
}

/**
 * Signs in (or with `create`, creates the account) and keeps the new session.
 * A guest who creates an account sends its session: the guest becomes the
 * account and keeps its games.
 */
export async function signIn(username, password, create) {
  const guest = create && session && !session.account ? session.token : undefined;
  session = await request('POST', create ? '/api/accounts' : '/api/login', { username, password }, guest);
  localStorage.setItem(TOKEN_KEY, JSON.stringify(session));
  return session;
}

/** Ends this session on the server and starts a new guest one. */
export async function logOut() {
  if (session) {
    try {
      await request('POST', '/api/logout', {}, session.token);
    } catch {
      /* an expired session is gone already */
    }
  }
  session = null;
  localStorage.removeItem(TOKEN_KEY);
  return ensureSession();
}

const tok = () => session && session.token;
const tpath = (id) => `/api/tournaments/${encodeURIComponent(id)}`;

export const api = {
  tournaments: () => request('GET', '/api/tournaments'),
  tournament: (id) => request('GET', tpath(id), undefined, tok()),
  createTournament: (body) => request('POST', '/api/tournaments', body, tok()),
  registerTournament: (code) => request('POST', '/api/tournaments/register', { code }, tok()),
  checkIn: (id) => request('POST', `${tpath(id)}/check-in`, {}, tok()),
  withdraw: (id) => request('POST', `${tpath(id)}/withdraw`, {}, tok()),
  checkInPlayer: (id, player) => request('POST', `${tpath(id)}/check-in`, { player }, tok()),
  withdrawPlayer: (id, player) => request('POST', `${tpath(id)}/withdraw`, { player }, tok()),
  explain: (id, mv) => request('POST', `/api/games/${encodeURIComponent(id)}/explain`, { mv }),
  finishTournament: (id, reason) => request('POST', `${tpath(id)}/finish`, { reason }, tok()),
  editTournament: (id, settings, reason) => request('PATCH', tpath(id), { settings, reason }, tok()),
  setRegistration: (id, closes_ms, reason) => request('POST', `${tpath(id)}/registration`, { closes_ms, reason }, tok()),
  deleteTournament: (id, reason) => request('DELETE', tpath(id), { reason }, tok()),
  reinstate: (id, player) => request('POST', `${tpath(id)}/reinstate`, { player }, tok()),
  pairRound: (id) => request('POST', `${tpath(id)}/rounds`, {}, tok()),
  rounds: (id) => request('GET', `${tpath(id)}/rounds`),
  standings: (id) => request('GET', `${tpath(id)}/standings`),
  arbiter: (id, game, action, reason) => request('POST', `${tpath(id)}/games/${encodeURIComponent(game)}/arbiter`, { action, reason }, tok()),
  boards: () => request('GET', '/api/me/boards', undefined, tok()),
  listGames: (phase, variant = '') =>
    request('GET', `/api/games?phase=${encodeURIComponent(phase)}${variant ? `&variant=${encodeURIComponent(variant)}` : ''}`),
  variants: () => request('GET', '/api/variants'),
  createGame: (body) => request('POST', '/api/games', body, session && session.token),
  joinGame: (id, side, seed) => request('POST', `/api/games/${encodeURIComponent(id)}/join`, { ...(side ? { side } : {}), ...(seed ? { seed } : {}) }, session && session.token),
  addBot: (id, side, level) => request('POST', `/api/games/${encodeURIComponent(id)}/bots`, { side, level }, session && session.token),
  game: (id) => request('GET', `/api/games/${encodeURIComponent(id)}`),
  // with the token: the record shows this viewer the chat channels it may read
  record: (id) => request('GET', `/api/games/${encodeURIComponent(id)}/record`, undefined, tok()),
  sessions: () => request('GET', '/api/sessions', undefined, tok()),
  revokeSession: (id) => request('DELETE', `/api/sessions/${encodeURIComponent(id)}`, undefined, tok()),
  player: (id, variant = '') => request('GET', `/api/players/${encodeURIComponent(id)}${variant ? `?variant=${encodeURIComponent(variant)}` : ''}`),
  pairingTiles: () => request('GET', '/api/pairing/tiles'),
  pairing: () => request('GET', '/api/pairing', undefined, tok()),
  seek: (tile) => request('POST', '/api/pairing', { tile }, tok()),
  leavePairing: () => request('DELETE', '/api/pairing', undefined, tok()),
  seeks: () => request('GET', '/api/seeks', undefined, tok()),
  postSeek: (body) => request('POST', '/api/seeks', body, tok()),
  joinSeek: (id) => request('POST', `/api/seeks/${encodeURIComponent(id)}/join`, {}, tok()),
  cancelSeek: (id) => request('DELETE', `/api/seeks/${encodeURIComponent(id)}`, undefined, tok()),
  leaderboard: (variant, cls) => request('GET', `/api/leaderboard?variant=${encodeURIComponent(variant)}&class=${encodeURIComponent(cls)}`),
};

export function wsUrl(id) {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${location.host}/api/games/${encodeURIComponent(id)}/ws`;
}
