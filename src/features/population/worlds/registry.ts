// The worlds a SOP may name in `world.type`: the built-ins (social, market, board, network, grid, contest, groups) and those a
// program adds with `defineWorld` + `register`.
import { board } from './board.js';
import { contest } from './contest.js';
import { grid } from './grid.js';
import { groups } from './groups.js';
import { network } from './network.js';
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

export const BUILT_IN_WORLDS: readonly AnyWorld[] = [social, market, board, network, grid, contest, groups];

/** Worlds a program added for every SOP it loads and runs (registerWorld). */
const added: AnyWorld[] = [];

/**
 * Adds a world (made by defineWorld) that SOPs loaded and run in this process may name in
 * `world.type`, checked by `sop validate` like the built-ins. A name already taken is an error.
 */
export function registerWorld(world: AnyWorld): void {
  new WorldRegistry([...BUILT_IN_WORLDS, ...added, world]); // refuses a name taken
  added.push(world);
}

/** A registry holding the built-in worlds and those registered (a new one each call, so a program can add more to it). */
export function defaultWorlds(): WorldRegistry {
  return new WorldRegistry([...BUILT_IN_WORLDS, ...added]);
}
