/**
 * AAC in ADTS (ISO/IEC 13818-7 §6.2, 14496-3 §1.A.2): the stream an AAC encoder writes to a pipe, each raw frame
 * behind a 7-byte header (9 with a CRC) that gives its length, profile, rate and channels.
 */

/** Samples (per channel) in an AAC frame (AAC LC's long frame). */
export const AAC_FRAME = 1024;

/** samplingFrequencyIndex → rate (ISO/IEC 14496-3 Table 1.18). */
export const AAC_SAMPLE_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350] as const;

/** The raw AAC frames of an ADTS stream and what its headers say of them. */
export interface AdtsStream {
  /** audioObjectType (2: AAC LC). */
  objectType: number;
  sampleRate: number;
  channels: number;
  /** Each frame's raw_data_block, without its header. */
  frames: Buffer[];
}

/** Splits an ADTS stream into its raw frames; throws on a broken header, a frame cut short or a change of format. */
export function parseAdts(stream: Buffer): AdtsStream {
  const frames: Buffer[] = [];
  let format: Omit<AdtsStream, 'frames'> | undefined;
  for (let offset = 0; offset < stream.length; ) {
    if (offset + 7 > stream.length || stream[offset] !== 0xff || ((stream[offset + 1] as number) & 0xf6) !== 0xf0) {
      throw new Error(`ADTS: no frame header at byte ${offset}`);
    }
    const protectionAbsent = (stream[offset + 1] as number) & 1;
    const third = stream[offset + 2] as number;
    const fourth = stream[offset + 3] as number;
    const objectType = (third >> 6) + 1;
    const sampleRate = AAC_SAMPLE_RATES[(third >> 2) & 0x0f];
    const channels = ((third & 1) << 2) | (fourth >> 6);
    const length = ((fourth & 3) << 11) | ((stream[offset + 4] as number) << 3) | ((stream[offset + 5] as number) >> 5);
    const blocks = ((stream[offset + 6] as number) & 3) + 1;
    const header = protectionAbsent ? 7 : 9;
    if (sampleRate === undefined || channels === 0 || blocks !== 1 || length <= header || offset + length > stream.length) {
      throw new Error(`ADTS: a frame the stream cannot hold at byte ${offset}`);
    }
    format ??= { objectType, sampleRate, channels };
    if (format.objectType !== objectType || format.sampleRate !== sampleRate || format.channels !== channels) throw new Error(`ADTS: the format changes at byte ${offset}`);
    frames.push(stream.subarray(offset + header, offset + length));
    offset += length;
  }
  if (!format) throw new Error('ADTS: no frame');
  return { ...format, frames };
}

/** The AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1) of a stream: object type, rate index and channel configuration. */
export function audioSpecificConfig({ objectType, sampleRate, channels }: Omit<AdtsStream, 'frames'>): Buffer {
  const rateIndex = AAC_SAMPLE_RATES.indexOf(sampleRate as (typeof AAC_SAMPLE_RATES)[number]);
  if (rateIndex === -1 || objectType >= 31) throw new Error(`AAC: no AudioSpecificConfig for object type ${objectType} at ${sampleRate} Hz`);
  const config = Buffer.alloc(2);
  config.writeUInt16BE((objectType << 11) | (rateIndex << 7) | (channels << 3));
  return config;
}
