// order: the roles speak in turn, in the order of the state's roles (the default).
import { nextInOrder } from '../controller.js';
import type { ControllerStrategy } from './types.js';

export const order: ControllerStrategy = {
  type: 'order',
  pick: (state, rt) => ({ role: nextInOrder(rt, state.roles), how: 'order' }),
};
