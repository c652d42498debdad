import type { FastifyRequest } from 'fastify';
import type { JobClient } from '../jobs/admission/slots.js';

/** Who a job is charged to: the API key it came with, else the client's address (TRUST_PROXY decides which). */
export function clientId(request: FastifyRequest): string {
  return request.apiKeyId ? `key:${request.apiKeyId}` : `ip:${request.ip}`;
}

/** The job's client, for the job runner: its id, its disconnect, and the characters it submits. */
export function jobClient(request: FastifyRequest, characters: number): JobClient {
  return { id: clientId(request), signal: request.clientSignal, characters };
}

