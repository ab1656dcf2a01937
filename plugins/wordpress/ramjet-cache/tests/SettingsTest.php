<?php
/**
 * Tests of settings sanitising and of reading the site's stats.
 *
 * @package RamjetCache
 */

use PHPUnit\Framework\TestCase;
use Ramjet\Cache\AdminClient;
use Ramjet\Cache\Settings;
use Ramjet\Cache\SiteStats;

/**
 * Settings and SiteStats.
 */
final class SettingsTest extends TestCase {

	public function test_sanitize_drops_bad_values() {
		$got = Settings::sanitize(
			array(
				'ttl_post'        => '-5',
				'ttl_feed'        => '120',
				'exclude_paths'   => "/cart/\r\n\n /my account/ \n/cart/",
				'admin_url'       => 'javascript:alert(1)',
				'admin_token'     => "tok en\n",
				'esi'             => 'maybe',
				'proxy'           => 'on',
				'unknown'         => 'x',
			)
		);
		$this->assertSame( 0, $got['ttl_post'] );
		$this->assertSame( 120, $got['ttl_feed'] );
		$this->assertSame( array( '/cart/', '/myaccount/' ), $got['exclude_paths'] );
		$this->assertSame( '', $got['admin_url'] );
		$this->assertSame( 'token', $got['admin_token'] );
		$this->assertSame( 'auto', $got['esi'] );
		$this->assertSame( 'on', $got['proxy'] );
		$this->assertArrayNotHasKey( 'unknown', $got );
		$this->assertSame( 'http://127.0.0.1:9090', Settings::sanitize( array( 'admin_url' => 'http://127.0.0.1:9090/' ) )['admin_url'] );
	}

	private function stats() {
		WpStubs::reset();
		$settings = new Settings(
			array(
				'admin_url'   => 'http://127.0.0.1:9090',
				'admin_token' => 'tok',
			)
		);
		return new SiteStats( new AdminClient( $settings ), 'wp.test' );
	}

	public function test_site_stats_are_read_once_with_the_sites_host_and_token() {
		$stats                = $this->stats();
		WpStubs::$response    = array(
			'response' => array( 'code' => 200 ),
			'body'     => '{"sites":[{"site":"wp.test","hour":{"requests":8,"hit_ratio":0.25},"uncached":[{"url":"http://wp.test/cart","reason":"set-cookie","count":2}]}]}',
		);
		$got = $stats->get();
		$this->assertSame( 'wp.test', $got['site'] );
		$this->assertSame( 8, $got['hour']['requests'] );
		$this->assertSame( 'set-cookie', $got['uncached'][0]['reason'] );
		$stats->get();
		$this->assertCount( 1, WpStubs::$requests, 'read once per request' );
		$this->assertSame( 'http://127.0.0.1:9090/stats?host=wp.test', WpStubs::$requests[0][0] );
		$this->assertSame( 'Bearer tok', WpStubs::$requests[0][1]['headers']['Authorization'] );
	}

	public function test_a_refusal_or_another_answer_is_an_error() {
		$stats             = $this->stats();
		WpStubs::$response = array(
			'response' => array( 'code' => 403 ),
			'body'     => 'wp.test is not a host of this token\'s site',
		);
		$this->assertInstanceOf( WP_Error::class, $stats->get() );
		$stats             = $this->stats();
		WpStubs::$response = array(
			'response' => array( 'code' => 200 ),
			'body'     => '{"sites":[]}',
		);
		$this->assertInstanceOf( WP_Error::class, $stats->get() );
	}

	public function test_reasons_are_explained() {
		$this->assertStringContainsString( 'Set-Cookie', SiteStats::explain( 'set-cookie' ) );
		$this->assertStringContainsString( 'Vary: *', SiteStats::explain( 'vary-star' ) );
		$this->assertSame( 'something-new', SiteStats::explain( 'something-new' ) );
	}
}
