/**
 * U11: loaded with `node --import` before the CLI, this makes `@statelyai/inspect` unresolvable,
 * as on a machine where the optional peer is not installed. A resolve hook (node:module
 * register), nothing in the CLI knows of it.
 */
import { register } from 'node:module';

const hook = `export async function resolve(specifier, context, next) {
  if (specifier === '@statelyai/inspect' || specifier.startsWith('@statelyai/inspect/')) {
    const error = new Error("Cannot find package '" + specifier + "'");
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`;

register(`data:text/javascript,${encodeURIComponent(hook)}`);
