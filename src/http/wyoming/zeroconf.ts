// Zeroconf (mDNS DNS-SD, RFC 6762 and 6763) for the Wyoming server: Home Assistant finds `_wyoming._tcp.local.`
// services by themselves and offers them under Settings → Devices & services, as it does wyoming-piper's.
import { createSocket } from 'node:dgram';
import { networkInterfaces } from 'node:os';
import { isIPv4 } from 'node:net';
import multicastDns from 'multicast-dns';
import type { Answer } from 'dns-packet';
import type { FastifyBaseLogger } from 'fastify';

/** The DNS-SD service type Home Assistant's Wyoming integration browses for. */
export const WYOMING_SERVICE = '_wyoming._tcp.local';
const SERVICES = '_services._dns-sd._udp.local';
const MDNS_ADDRESS = '224.0.0.251';
/** RFC 6762 §10: two minutes for records naming a host, 75 minutes for the others. */
const HOST_TTL = 120;
const OTHER_TTL = 4500;
/** §8.3: an announcement is sent at least twice, a second apart. */
const ANNOUNCE_GAP_MS = 1000;

export interface ZeroconfAnnouncement {
  /** The address announced: where Home Assistant will connect. */
  address: string;
  /** Says goodbye (the records with a TTL of 0, §10.1) and stops answering. */
  close(): Promise<void>;
}

/**
 * Announces the Wyoming server at `port` as `name` and answers queries for it, on the interface of `host` when the
 * server listens on one address (the records then name that address), else on every interface with the address
 * that reaches the mDNS group (as the wyoming package's own zeroconf does).
 */
export async function announceWyoming(options: { name: string; port: number; host: string; log: FastifyBaseLogger }): Promise<ZeroconfAnnouncement> {
  const { name, port, log } = options;
  const specific = isIPv4(options.host) && options.host !== '0.0.0.0' ? options.host : undefined;
  const address = specific ?? (await outboundAddress());
  const instance = `${name}.${WYOMING_SERVICE}`;
  const target = `${hostLabel(name)}.local`;
  const records = (live: boolean): { answers: Answer[]; additionals: Answer[] } => ({
    answers: [{ name: WYOMING_SERVICE, type: 'PTR', ttl: live ? OTHER_TTL : 0, data: instance }],
    additionals: [
      { name: instance, type: 'SRV', ttl: live ? HOST_TTL : 0, flush: true, data: { port, target, priority: 0, weight: 0 } },
      { name: instance, type: 'TXT', ttl: live ? OTHER_TTL : 0, flush: true, data: [] },
      { name: target, type: 'A', ttl: live ? HOST_TTL : 0, flush: true, data: address },
    ],
  });
  const live = records(true);
  const mdns = multicastDns({ interface: specific, loopback: true, reuseAddr: true });
  // A socket that cannot start (no multicast here, the port taken without sharing) fails the announcement at once.
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => {
      mdns.destroy();
      reject(error);
    };
    mdns.once('error', failed);
    mdns.once('ready', () => {
      mdns.off('error', failed);
      resolve();
    });
  });
  mdns.on('error', (error) => log.warn({ err: error }, 'Zeroconf: the mDNS socket failed; Home Assistant will not find the Wyoming server by itself'));
  mdns.on('warning', (error) => log.debug({ err: error }, 'Zeroconf: a malformed mDNS packet was ignored'));
  mdns.on('query', (query) => {
    const asked = (recordName: string, type: string) =>
      query.questions.some((question) => question.name.toLowerCase() === recordName.toLowerCase() && (question.type === type || String(question.type) === 'ANY'));
    const all = [...live.answers, ...live.additionals];
    const direct = all.filter((record) => asked(record.name, record.type));
    const browsing = asked(SERVICES, 'PTR') ? [{ name: SERVICES, type: 'PTR', ttl: OTHER_TTL, data: WYOMING_SERVICE } as Answer] : [];
    if (direct.length === 0 && browsing.length === 0) return;
    mdns.respond({ answers: [...browsing, ...direct], additionals: all.filter((record) => !direct.includes(record)) });
  });
  const announce = () => mdns.respond(live);
  announce();
  const again = setTimeout(announce, ANNOUNCE_GAP_MS);
  again.unref();
  log.info({ name, address, port, service: WYOMING_SERVICE }, 'Wyoming server announced by zeroconf (Home Assistant discovers it)');
  return {
    address,
    close: async () => {
      clearTimeout(again);
      await new Promise<void>((resolve) => mdns.respond(records(false), () => resolve()));
      await new Promise<void>((resolve) => mdns.destroy(() => resolve()));
    },
  };
}

/** The address this machine reaches the mDNS group from (its route's source), else its first external IPv4 one. */
async function outboundAddress(): Promise<string> {
  const socket = createSocket('udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(1, MDNS_ADDRESS, () => resolve());
    });
    return socket.address().address;
  } catch {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry?.family === 'IPv4' && !entry.internal);
    return external?.address ?? '127.0.0.1';
  } finally {
    socket.close();
  }
}

/** A host label (RFC 1123) made of an instance name: lower case letters, digits and hyphens. */
function hostLabel(name: string): string {
  const label = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return label || 'voxreel';
}
