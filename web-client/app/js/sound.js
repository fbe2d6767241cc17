// Short sounds (WebAudio, nothing to download); mutable. Each event has its
// own: a wooden click for a move, a lower thud for a capture, a rising pair
// for a check, a tick when your time runs low, a falling chord at the end.

let ctx = null;
let muted = localStorage.getItem('sanguo.muted') === '1';

export const isMuted = () => muted;

export function setMuted(m) {
  muted = m;
  localStorage.setItem('sanguo.muted', m ? '1' : '0');
}

/** Notes of each sound: [start s, frequency Hz, end frequency Hz, length s, wave]. */
const SOUNDS = {
  move: [[0, 880, 320, 0.12, 'triangle']],
  capture: [[0, 520, 180, 0.2, 'triangle'], [0.03, 260, 120, 0.18, 'square']],
  check: [[0, 660, 660, 0.1, 'sine'], [0.12, 990, 990, 0.14, 'sine']],
  low: [[0, 1400, 1400, 0.05, 'square']],
  end: [[0, 784, 784, 0.25, 'sine'], [0.18, 659, 659, 0.25, 'sine'], [0.36, 523, 523, 0.45, 'sine']],
};

/** Plays one of the sounds (`move`, `capture`, `check`, `low`, `end`). */
export function play(kind) {
  if (muted || !SOUNDS[kind]) return;
  // tests read which sounds a page played
  (window.__sanguoSounds = window.__sanguoSounds || []).push(kind);
  try {
    ctx = ctx || new (window.AudioContext || window.webkitAudioContext)();
    const now = ctx.currentTime;
    for (const [at, f0, f1, len, wave] of SOUNDS[kind]) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.type = wave;
      osc.frequency.setValueAtTime(f0, now + at);
      if (f1 !== f0) osc.frequency.exponentialRampToValueAtTime(f1, now + at + len * 0.7);
      gain.gain.setValueAtTime(0.0001, now + at);
      gain.gain.exponentialRampToValueAtTime(0.3, now + at + 0.005);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + at + len);
      osc.connect(gain).connect(ctx.destination);
      osc.start(now + at);
      osc.stop(now + at + len + 0.05);
    }
  } catch {
    /* no audio available */
  }
}

/** A move's sound: a capture sounds apart from a quiet move. */
export function playMove(capture = false) {
  play(capture ? 'capture' : 'move');
}
