// Every store upgrade, in the order they run when a store opens (Journal.checkFormat): each brings
// data an earlier build laid out otherwise to the layout this build reads, once, before anything
// reads the store. Whoever opens a store (the service, a restore's check) hands over this list.
import type { StoreUpgrade } from './store/journal.ts';
import { resultRowsUpgrade } from './results/stored-row-upgrade.ts';
import { spanLayoutUpgrade } from './traces/span-layout.ts';

export const storeUpgrades: readonly StoreUpgrade[] = [spanLayoutUpgrade, resultRowsUpgrade];
