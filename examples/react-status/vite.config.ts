import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/**
 * U5: the page must bundle without any Node-only module. Vite would otherwise replace one with
 * a stub that throws only when used; this makes the build fail instead, naming the importer.
 */
export function browserOnly(): Plugin {
  const builtins = new Set(builtinModules);
  return {
    name: 'browser-only',
    enforce: 'pre',
    apply: 'build',
    resolveId(source, importer) {
      if (source.startsWith('node:') || builtins.has(source)) {
        this.error(`Node-only module '${source}' imported by ${importer ?? 'an entry'}`);
      }
      return null;
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  plugins: [react(), browserOnly()],
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
  // Most of the bundle is the SDK Client (zod, ajv); the transport and its charts are a small part.
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 1024 },
});
