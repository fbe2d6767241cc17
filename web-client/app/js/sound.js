// A short wooden click for moves (WebAudio, nothing to download); mutable.

let ctx = null;
let muted = localStorage.getItem('sanguo.muted') === '1';

export const isMuted = () => muted;

export function setMuted(m) {
  muted = m;
  localStorage.setItem('sanguo.muted', m ? '1' : '0');
}

export function playMove(capture = false) {
  if (muted) return;
  try {
    ctx = ctx || new (window.AudioContext || window.webkitAudioContext)();
    const now = ctx.currentTime;
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = 'triangle';
    osc.frequency.setValueAtTime(capture ? 520 : 880, now);
    osc.frequency.exponentialRampToValueAtTime(capture ? 180 : 320, now + 0.08);
    gain.gain.setValueAtTime(0.0001, now);
    gain.gain.exponentialRampToValueAtTime(0.35, now + 0.005);
    gain.gain.exponentialRampToValueAtTime(0.0001, now + (capture ? 0.2 : 0.12));
    osc.connect(gain).connect(ctx.destination);
    osc.start(now);
    osc.stop(now + 0.25);
  } catch {
    /* no audio available */
  }
}
