import { aliceText } from '../test/helpers/fixtures.js';
import { descendants, residentKb } from './memory.js';
import { startService } from './service.js';
const service = await startService({ WARM_VOICE: 'piper:en_US-joe-medium' });
const text = await aliceText(Number(process.env.CHARS ?? 16500));
const r = await fetch(`${service.baseUrl}/tts-video`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, voice: 'piper:en_US-joe-medium', async: true, resolution: '1080p', aspect_ratio: '9:16' }) });
const { id } = await r.json() as { id: string };
try {
  for (;;) {
    await new Promise((res) => setTimeout(res, 3000));
    const v = await (await fetch(`${service.baseUrl}/jobs/${id}`)).json() as { state: string; progress: number; error?: unknown; result?: unknown };
    console.log(v.state, v.progress, 'root', Math.round((residentKb(service.pid) ?? 0) / 1024), descendants(service.pid).map((k) => `${k.kind.split(' ')[0]}:${Math.round(k.rssKb / 1024)}`).join(' '));
    if (v.state !== 'running' && v.state !== 'queued') { console.log(JSON.stringify(v).slice(0, 500)); break; }
  }
} catch (error) {
  console.log('FAILED', error);
  for (const l of service.logs.filter((l) => (l.level as number) >= 40)) { const m = JSON.stringify(l); console.log(m.slice(0, 300), '...', m.slice(-1500)); }
}
await service.stop();
