// The openai client's HTTP error, typed: `err instanceof APIError` alone narrows to
// APIError<any, any, any>, whose status and headers are `any`.
import { APIError } from 'openai';

export type HttpApiError = APIError<number | undefined, Headers | undefined>;

export const isApiError = (err: unknown): err is HttpApiError => err instanceof APIError;
