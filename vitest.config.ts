import { defineConfig } from 'vitest/config';

// Many tests start the real CLI as a child process; give them room on a busy 2-core machine.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
