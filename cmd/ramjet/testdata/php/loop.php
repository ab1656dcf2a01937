<?php
// Never ends (and ignores max_execution_time): the pool's timeout kills it.
set_time_limit(0);
while (true) {
}
