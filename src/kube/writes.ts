/**
 * The two write idioms every controller repeats around the API's NotFound and AlreadyExists answers:
 * a read or delete of something that may already be gone, and a write that must leave the object
 * as given whether or not it existed. Duck-typed on the error (errors.ts), so fakes work too.
 */
import { isAlreadyExists, isNotFound } from './errors.js';

/** The request's result, or undefined when the API answered 404 NotFound; other errors are thrown. */
export async function ignoreNotFound<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

export interface CreateOrReplace<T> {
  create(): Promise<T>;
  replace(): Promise<T>;
}

/**
 * Creates the object, or replaces it when it already exists (AlreadyExists). With `exists: true`
 * (a cache shows it) the replace goes first and a NotFound falls back to the create, which saves
 * the failed create of the common case. Either way one of the two writes returns the stored object.
 */
export async function createOrReplace<T>(write: CreateOrReplace<T>, options: { exists?: boolean } = {}): Promise<T> {
  if (options.exists) {
    try {
      return await write.replace();
    } catch (e) {
      if (!isNotFound(e)) throw e;
      return await write.create();
    }
  }
  try {
    return await write.create();
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    return await write.replace();
  }
}
