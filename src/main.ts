// `npm start`: configuration from the environment, recover state, then listen. SIGTERM and
// SIGINT stop accepting, finish in-flight requests, snapshot and close the store.
import { loadConfig, ConfigError } from './config.ts';
import { createLogger } from './log.ts';
import { createService } from './service.ts';
import { StoreCorruptError } from './store/journal.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  let service;
  try {
    service = await createService({ ...config, logger });
  } catch (error) {
    if (error instanceof StoreCorruptError) {
      logger.fatal({ err: error }, error.message);
      process.exit(3);
    }
    throw error;
  }
  const address = await service.listen(config.port, config.host);
  logger.info({ url: `http://${address.address}:${address.port}`, storage: config.storage, dataDir: config.dataDir }, 'listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing in-flight requests and writing snapshots');
    try {
      await service.close();
      logger.info('stopped cleanly');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'stop failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

await main();
