// The worlds a SOP may name in `world.type`: the built-ins (social, market, board) and those a
// program adds with `defineWorld` + `register`.
import { board } from './board.js';
import { market } from './market.js';
import { social } from './social.js';
import { WorldDefinitionError, type AnyWorld } from './world.js';

export class WorldRegistry {
  private readonly worlds = new Map<string, AnyWorld>();

  constructor(worlds: readonly AnyWorld[] = []) {
    for (const w of worlds) this.register(w);
  }

  /** Adds a world (made by defineWorld); a name already taken is an error. */
  register(world: AnyWorld): this {
    if (this.worlds.has(world.name)) throw new WorldDefinitionError(`a world named "${world.name}" is already registered`);
    this.worlds.set(world.name, world);
    return this;
  }

  get(name: string): AnyWorld | undefined {
    return this.worlds.get(name);
  }

  names(): string[] {
    return [...this.worlds.keys()].sort();
  }
}

export const BUILT_IN_WORLDS: readonly AnyWorld[] = [social, market, board];

/** A registry holding the built-in worlds (a new one each call, so programs can add their own). */
export function defaultWorlds(): WorldRegistry {
  return new WorldRegistry(BUILT_IN_WORLDS);
}
