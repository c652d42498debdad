import type { Engine, VoiceHandle } from './types.js';

/** An engine's voice of this id with the engine bound to it, and the share of a rate it speaks itself (Engine.naturalSpeedShare). */
export function bindVoice(engine: Pick<Engine, 'findVoice' | 'synthesize' | 'naturalSpeedShare'>, voiceId: string): VoiceHandle | undefined {
  const voice = engine.findVoice(voiceId);
  if (!voice) return undefined;
  const speedShare = (voice.naturalSpeed && engine.naturalSpeedShare) || 1;
  return { ...voice, speedShare, synthesize: (text, options) => engine.synthesize(voice.id, text, options) };
}
