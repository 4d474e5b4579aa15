// Adapted from ../shared/mcp/bind-localhost.cjs (issue 16): tests start npm servers that call
// listen(port) without a host; this keeps them on loopback.
// Preload (node -r ./bind-localhost.cjs ...): force servers that call
// listen(port) without a host to bind 127.0.0.1 instead of all interfaces.
// With CALYX_TEST_PORT_FILE set, the port asked for is replaced by 0 (the kernel picks a free
// one) and the port bound is written to that file once listening: a test never races another
// process for a port it probed and released.
const fs = require('fs');
const net = require('net');
const orig = net.Server.prototype.listen;
const report = process.env.CALYX_TEST_PORT_FILE;
net.Server.prototype.listen = function (...args) {
  const a0 = args[0];
  if ((typeof a0 === 'number' || (typeof a0 === 'string' && /^\d+$/.test(a0))) && typeof args[1] !== 'string') {
    if (report) args[0] = 0;
    args.splice(1, 0, '127.0.0.1');
  } else if (a0 && typeof a0 === 'object' && !Array.isArray(a0) && a0.path === undefined && !a0.host) {
    args[0] = { ...a0, host: '127.0.0.1', ...(report ? { port: 0 } : {}) };
  }
  if (report) {
    this.once('listening', () => {
      const address = this.address();
      if (address && typeof address === 'object') {
        fs.writeFileSync(report + '.tmp', String(address.port));
        fs.renameSync(report + '.tmp', report);
      }
    });
  }
  return orig.apply(this, args);
};
