// Copied from ../shared/mcp/bind-localhost.cjs (issue 16): tests start npm servers that call
// listen(port) without a host; this keeps them on loopback.
// Preload (node -r ./bind-localhost.cjs ...): force servers that call
// listen(port) without a host to bind 127.0.0.1 instead of all interfaces.
const net = require('net');
const orig = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const a0 = args[0];
  if ((typeof a0 === 'number' || (typeof a0 === 'string' && /^\d+$/.test(a0))) && typeof args[1] !== 'string') {
    args.splice(1, 0, '127.0.0.1');
  } else if (a0 && typeof a0 === 'object' && !Array.isArray(a0) && a0.path === undefined && !a0.host) {
    args[0] = { ...a0, host: '127.0.0.1' };
  }
  return orig.apply(this, args);
};
