<?php
// Never returns: a request stuck in an endless loop, which SIGTERM does not end.
set_time_limit(0);
while (true) {
}
