import { fileURLToPath } from 'node:url';

/** The path of a file in fixtures/ (small programs that hang, crash or answer garbage on purpose). */
export const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url));
