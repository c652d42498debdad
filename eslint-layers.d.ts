// Types for eslint-layers.js, so TypeScript tests can read the layer table (allowJs is off).
import type { ESLint } from 'eslint';

export declare const LAYERS: Readonly<Record<string, readonly string[]>>;
export declare const FOUNDATION_FILES: readonly string[];
export declare function layerOf(relative: string): string | undefined;
export declare const layersPlugin: ESLint.Plugin;
