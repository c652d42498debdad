import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('serves on embedded defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, host: '127.0.0.1', cdnUrl: 'http://localhost:3000/files', logLevel: 'info' });
    expect(config.pricing).toEqual({ currency: 'USD', ttsPer1kChars: 0.015, videoPer1kChars: 0.015, videoPerMinute: 0.1 });
    expect(config.concurrency).toBeGreaterThanOrEqual(1);
  });

  it('reads and converts variables', () => {
    const config = loadConfig({ PORT: '8080', HOST: '0.0.0.0', CDN_URL: 'https://cdn.example.com/x/', PRICE_TTS_PER_1K_CHARS: '0.5' });
    expect(config).toMatchObject({ port: 8080, cdnUrl: 'https://cdn.example.com/x' });
    expect(config.pricing.ttsPer1kChars).toBe(0.5);
    expect(loadConfig({ HOST: '0.0.0.0' }).cdnUrl).toBe('http://localhost:3000/files');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['CDN_URL', 'ftp://example.com'],
    ['CONCURRENCY', '0'],
    ['PRICE_TTS_PER_1K_CHARS', '-1'],
    ['CURRENCY', 'dollars'],
  ])('stops on %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`\\b${name}=`));
  });
});
