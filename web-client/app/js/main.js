// The app: a hash router over the lobby (#/), a game (#/g/ID[?seat=W|B|Y|any]),
// a replay (#/r/ID), tournaments (#/t, #/t/ID[?code=CODE]), the rules
// (#/rules[/SECTION]), the account (#/account), a player's page (#/player/ID)
// and the leaderboard (#/leaderboard[?variant=&class=]); the header's
// account link, language and sound switches.

import { t, getLang, setLang, errorText } from './i18n.js';
import { ensureSession, currentSession } from './api.js';
import { isMuted, setMuted } from './sound.js';
import { mountLobby } from './lobby.js';
import { mountGame } from './game.js';
import { mountReplay } from './replay.js';
import { mountTournaments, mountTournament } from './tournament.js';
import { mountRules } from './rules.js';
import { mountAccount, mountPlayer, mountLeaderboard } from './players.js';
import { banner } from './ui.js';
import { loadVariants } from './variants.js';

const app = document.getElementById('app');
let page = null;

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function header(session) {
  document.title = `${t('title')} · Sanguo`;
  const me = document.getElementById('me');
  me.textContent = session ? session.name : '';
  me.title = t('profile');
  if (session) me.href = `#/player/${encodeURIComponent(session.player)}`;
  else me.removeAttribute('href');
  document.getElementById('account-link').textContent = session && session.account ? t('account') : t('signInUp');
  document.getElementById('leaderboard-link').textContent = t('leaderboard');
  document.getElementById('tournaments-link').textContent = t('tournaments');
  document.getElementById('rules-link').textContent = t('rules');
  const lang = document.getElementById('lang-toggle');
  lang.textContent = getLang() === 'zh' ? 'English' : '中文';
  const snd = document.getElementById('sound-toggle');
  snd.textContent = isMuted() ? `♪ ✕ ${t('muted')}` : `♪ ${t('sound')}`;
  snd.setAttribute('aria-pressed', String(!isMuted()));
}

let session = null;

function route() {
  if (page) page.destroy();
  page = null;
  header(currentSession() || session);
  const hash = location.hash || '#/';
  const [path, query] = hash.slice(1).split('?');
  const params = new URLSearchParams(query || '');
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'g' && parts[1]) {
    const seat = params.get('seat');
    page = mountGame(app, parts[1], { seat });
    // the join happens once; a reload must not ask again for another seat
    if (seat) history.replaceState(null, '', `#/g/${parts[1]}`);
  } else if (parts[0] === 'r' && parts[1]) {
    page = mountReplay(app, parts[1]);
  } else if (parts[0] === 't' && parts[1]) {
    page = mountTournament(app, parts[1], navigate, { code: params.get('code') });
  } else if (parts[0] === 't') {
    page = mountTournaments(app, navigate);
  } else if (parts[0] === 'rules') {
    page = mountRules(app, parts[1]);
  } else if (parts[0] === 'account') {
    page = mountAccount(app, navigate, (s) => {
      session = s;
      header(s);
    });
  } else if (parts[0] === 'player' && parts[1]) {
    page = mountPlayer(app, decodeURIComponent(parts[1]));
  } else if (parts[0] === 'leaderboard') {
    page = mountLeaderboard(app, params);
  } else {
    page = mountLobby(app, navigate);
  }
}

document.getElementById('lang-toggle').addEventListener('click', () => {
  setLang(getLang() === 'zh' ? 'en' : 'zh');
  route();
});
document.getElementById('sound-toggle').addEventListener('click', () => {
  setMuted(!isMuted());
  header(currentSession() || session);
});
window.addEventListener('hashchange', route);

// The boards come from the server: nothing is drawn before they are known.
async function loadVariantsUntilKnown() {
  for (let wait = 500; ; wait = Math.min(wait * 2, 8000)) {
    try {
      return await loadVariants();
    } catch (e) {
      banner(errorText(e));
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

Promise.all([ensureSession().catch((e) => (banner(errorText(e)), null)), loadVariantsUntilKnown()]).then(([s]) => {
  session = s;
  route();
});
